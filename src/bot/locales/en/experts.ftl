# Experts (src/experts): owners, hand-over, availability, private alerts, snippets. Staff texts, in the desk's
# language.

desk-card-owner = 🧑‍💼 Owner: {$owner}
desk-card-unassigned = not assigned
experts-owner-assigned = 🧑‍💼 Consultation #{$id} ({$title}) is yours, {$name}. New questions will be announced here.
experts-owner-handed = 🧑‍💼 {$by} handed consultation #{$id} ({$title}) over to you.
experts-handover-note = 🔁 Owner: {$from} → {$to} (by {$by}).
experts-assign-pick = Who takes this consultation over? Owner now: {$owner}.
experts-assign-done = Handed over to {$name}.
experts-assign-already = They already own it.
experts-assign-not-staff = Only the desk's staff can take consultations.
experts-assign-other-group = They are not one of this group's experts, so they could not answer here. Pick someone listed in this group.
experts-assign-unknown = This consultation is gone.
experts-staff-only = Only the desk's staff can do this.
experts-alert =
    ❓ Question #{$number} · consultation #{$id}
    {$client} · {$title}
    «{$text}»
experts-alert-open = Open the topic
experts-muted = 🔕 {$name} will get no private alerts of this consultation (/unmute to undo).
experts-unmuted = 🔔 {$name} gets private alerts of this consultation again.
experts-away-set = 🌙 {$name}, you are away: no new consultations until /back.
experts-away-already = 🌙 You are already away; /back to return.
experts-back-set = ☀️ Welcome back, {$name}: new consultations can come to you.
experts-back-already = ☀️ You are not away.
experts-snippet-usage = Usage: /snippet add NAME text · /snippet list · /snippet del NAME (NAME: a-z, 0-9, "_", "-").
experts-snippet-admins-only = Only admins edit snippets.
experts-snippet-added = Snippet «{$name}» added.
experts-snippet-replaced = Snippet «{$name}» replaced.
experts-snippet-deleted = Snippet «{$name}» deleted.
experts-snippet-missing = There is no snippet «{$name}».
experts-snippet-config-only = Snippet «{$name}» comes from the config file; it is changed there.
experts-snippet-bad-name = A snippet name is a-z, 0-9, "_" or "-", up to 32 characters.
experts-snippet-list = Snippets:
experts-snippet-list-empty = No snippets yet: /snippet add NAME text.
experts-snippet-send-usage = Usage: /s NAME (the list: /snippet list).
experts-snippet-unknown = There is no snippet «{$name}» (the list: /snippet list).
experts-snippet-not-sent = The snippet was not sent: nothing to answer in this consultation.
sla-reminder-owner-away = The owner ({$name}) is away.
report-owners-title = 🧑‍💼 Owners (live consultations · open questions)
report-owners-line = {$name}: {$consultations} · {$open}{$away}
report-owners-away = (away)
report-owners-unassigned = Not assigned: {$count}
experts-sla-reminder-private = ⏰ Consultation #{$id}: the answer to question #{$number} is due by {$due} ({$left} of working time left).
