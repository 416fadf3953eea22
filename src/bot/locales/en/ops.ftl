# Operating the desk: answers to input that matches nothing, strict command arguments.
callback-unknown = This button is no longer active.
desk-cmd-ban-usage = Usage: /{$cmd} (no arguments): it applies to this topic's client.
