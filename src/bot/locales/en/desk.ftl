# The consultation desk (src/bot/features/desk.ts, staff.ts; src/consultations, src/routing).
# Client-facing texts are in the client's language; staff-facing ones (desk-card-*, desk-note-*, desk-cmd-*) in the
# desk's default language.

## To the client

desk-receipt =
    ✅ Question #{$number} accepted at {$accepted}.
    The expert will answer by {$due} ({$sla} of business time). Add details in further messages: they belong to this question until the answer comes.
desk-refused-no-consultation = You have no paid consultation, so this message was not passed to the expert. See /tariffs to buy one.
desk-refused-not-started = Your consultation window has not started yet: it opens at {$start}. Nothing was counted; please write again then.
desk-refused-not-started-on-request = Your consultation window has not started yet: it opens when you press “Start” (see /status). Nothing was counted.
desk-refused-not-started-no-date = Your consultation window has not started yet: the desk will agree a start date with you. Nothing was counted.
desk-refused-window-closed =
    The consultation window closed at {$end}, so this message was not passed to the expert. New questions need a new consultation (/tariffs).
desk-refused-window-closed-open = Your accepted question will still be answered.
desk-refused-closed = The desk closed this consultation at {$end}, so this message was not passed to the expert. New questions need a new consultation (/tariffs).
desk-refused-no-appeals =
    No questions left in this consultation: {$left} of {$total} left{ $held ->
        [0] .
       *[other] ; {$held} awaiting an answer.
    }
    This message was not passed to the expert. More questions need a new consultation (/tariffs).
desk-refused-refunded = This consultation was refunded, so new questions are not accepted. Answers to questions accepted earlier still arrive here.
desk-refused-banned = Sorry, messages from this account are not accepted.
desk-refused-unavailable = The desk is temporarily unavailable: your message was not accepted and nothing was counted. Please send it again in a minute.
desk-not-copyable = This kind of message cannot be passed to the expert. Please send it as text, a photo, a file or a voice message.
desk-unknown-command = Unknown command.{ $near ->
        [none] {""}
       *[other] {" "}Did you mean {$near}?
    }
    Commands: {$commands}
    Anything else you write goes to the expert as part of your question.
desk-window-extended = Your consultation window was extended by {$hours} h: it now ends at {$end}.
desk-closed-early = The desk has ended your consultation. Questions accepted before will still be answered here.

## In the staff topic

desk-card =
    📋 Consultation #{$id} · {$state}
    👤 {$name}{$username} · id {$userId} · language {$language}
    📦 {$tariff} · {$price} ⭐
    🕒 Window: {$start} — {$end}
    ❓ Questions: {$left} left of {$total}; {$open} awaiting an answer
    💳 Payments: {$payments}
    📚 Earlier consultations: {$earlier}
desk-card-state-waiting = waiting for the start
desk-card-state-active = active
desk-card-state-closed = closed
desk-card-state-revoked = refunded
desk-card-blocked = ⚠️ The client has blocked the bot.
desk-card-banned = ⛔ The client is banned.
desk-card-none = none
desk-note-recreated =
    ♻️ This topic replaces the previous one for this consultation ({$reason}); the route has moved here.
    So far: { $inCount ->
        [one] {$inCount} message
       *[other] {$inCount} messages
    } from the client, {$outCount} to the client; questions: {$appeals}.
desk-note-recreated-line = {$who}: {$text}
desk-note-recreated-client = client
desk-note-recreated-staff = staff
desk-note-reopened = ♻️ This topic was closed; it has been reopened because the consultation still needs it.
desk-note-client-blocked = ⚠️ The client has blocked the bot: messages to them are not delivered until they write again. They will get them then.
desk-note-client-back = ✅ The client wrote again: { $count ->
        [one] the message that could not be delivered is being sent now.
       *[other] {$count} messages that could not be delivered are being sent now.
    }
desk-note-not-copyable = ⚠️ The client sent a message ({$type}) that cannot be copied here; they were asked to send it another way.
desk-note-not-delivered = ⚠️ A message ({$type}) could not be delivered to the client: {$reason}
desk-note-withheld = ⚠️ This consultation was refunded with “stop”: staff messages are no longer delivered to the client.
desk-not-your-group = ⚠️ Not sent to the client: you are not one of this group's experts, and this consultation is handled here. An admin can list you in this group (staffGroups in the config).
staff-cb-other-group = This consultation is handled in another staff group, where you are not one of the experts: nothing was done. Its own group's experts or an admin can act on it.
desk-cmd-admins-only = Only desk admins can do that.
desk-cmd-extend-usage = Usage: /extend <hours>, e.g. /extend 4
desk-cmd-extended = ⏱ {$by} extended the window by {$hours} h: it now ends at {$end}.
desk-cmd-not-active = The consultation { $state ->
        [waiting] has not started yet
        [closed] has already ended
        [revoked] has been refunded
       *[other] {$state}
    }, so this cannot be done.
desk-cmd-close-confirm = End consultation #{$id} now? The client can no longer ask new questions; accepted ones should still be answered.
desk-cmd-close-yes = Yes, end it
desk-cmd-close-no = Cancel
desk-cmd-closed = 🔚 {$by} ended the consultation early.
desk-cmd-close-cancelled = Cancelled.
desk-cmd-banned = ⛔ {$by} banned the client: their messages are refused and they cannot buy.
desk-cmd-unbanned = ✅ {$by} lifted the ban.
desk-cmd-already-banned = The client is already banned: nothing changed.
desk-cmd-not-banned = The client is not banned: nothing changed.
desk-cmd-note-usage = Usage: /note <text> — an internal note kept on the consultation, never sent to the client.
desk-cmd-note-saved = 📝 Note saved.
desk-cmd-unknown = Unknown command.{ $near ->
        [none] {""}
       *[other] {" "}Did you mean {$near}?
    }
    Commands here: {$commands}
    Messages starting with “{$prefix}” stay in the topic.

# Why a message was not delivered (src/routing/errors.ts, failReasonKey): in words, not Telegram's answer.
desk-fail-blocked = the client has blocked the bot.
desk-fail-protected = it is protected from forwarding, so Telegram does not let it be copied.
desk-fail-gone = the original message has been deleted.
desk-fail-uncopyable = Telegram does not let this kind of message be copied.
desk-fail-too-long = it is too long for Telegram.
desk-fail-other = Telegram refused to send it; the details are in the log.
