# SLA jobs, the window lifecycle, /status additions and transcripts (src/lifecycle, src/bot/features/transcript.ts).
# Client-facing texts are in the client's language; staff-facing ones (sla-reminder, sla-breach-topic, sla-breach-
# admins, sla-refund-flag, sla-policy-*, lifecycle-topic-*) in the desk's default language.

## SLA: to the staff

sla-reminder = ⏰ Question #{$number} is due at {$due}: {$left} of business time left.
sla-expert-mention = { $n ->
        [0] expert
       *[other] expert {$n}
    }
sla-breach-topic = 🔴 Question #{$number} was due at {$due} and has not been answered. Breach policy: {$policy}.
sla-breach-admins =
    🔴 SLA breached: consultation #{$consultation} ({$title}, client id {$user}), question #{$number}.
    Accepted {$accepted}, due {$due}.
    Breach policy: {$policy}.
sla-client-blocked = ⚠️ The client has blocked the bot: messages to them are recorded as not delivered. Nothing is paused.
sla-policy-none = none (the tariff gives no compensation)
sla-policy-extended = the window was extended by {$hours} h (it now ends at {$end})
sla-policy-extra-appeal = one extra question granted ({$left} left)
sla-policy-skipped-window = not applied: the window had already ended
sla-policy-skipped-refunded = not applied: the consultation was refunded
sla-refund-flag =
    ⚖️ Consultation #{$consultation} ({$title}, client id {$user}): question #{$number}, accepted {$accepted} and due {$due}, was not answered by the end of the consultation.
    Please decide on a refund ({$amount} ⭐ paid).

## SLA: to the client

sla-breach-client-none = ⏰ We are sorry: the answer to your question #{$number} was due by {$due} and is late. The expert will answer as soon as possible.
sla-breach-client-extended = ⏰ We are sorry: the answer to your question #{$number} was due by {$due} and is late. As your tariff provides, your window has been extended by {$hours} h: it now ends at {$end}.
sla-breach-client-extra-appeal = ⏰ We are sorry: the answer to your question #{$number} was due by {$due} and is late. As your tariff provides, you get one extra question: {$left} left in this consultation.
sla-breach-client-after-window = ⏰ We are sorry: the answer to your question #{$number} was due by {$due} and is late. The desk has been told and will decide on a compensation; the answer will still come here.

## The window

lifecycle-closing-soon =
    ⏳ Your consultation “{$title}” closes soon: {$left} left, until {$end}.
    Questions left: {$appealsLeft} of {$appealsTotal}.
lifecycle-closing-soon-open = A question of yours is waiting for the expert's answer; it will be answered after the window too.
lifecycle-closed =
    🔚 Your consultation “{$title}” ended at {$end}. New questions need a new consultation (/tariffs).
    You can get the transcript of the conversation with the button below or /transcript.
lifecycle-closed-open = Your accepted question will still be answered here.
lifecycle-topic-closed = 🔚 The window ended at {$end}. Every question has been answered: the topic will be closed.
lifecycle-topic-closed-open = 🔚 The window ended at {$end}. Still to answer: {$open}. The topic will be closed once they are answered.

## /status

status-time-left = ⏱ Time left: {$left}.
status-time-over = ⏱ The window is over.
status-appeals = ❓ Questions: {$used} answered, {$held} awaiting an answer, {$left} left of {$total}.
status-open-appeal = • Question #{$number} (accepted {$accepted}): answer due by {$due}.
status-open-appeal-late = • Question #{$number} (accepted {$accepted}): answer was due by {$due} and is late.

## Transcript

transcript-button = 📄 Get the transcript
transcript-button-order = 📄 Transcript of order {$order}
transcript-queued = Preparing the transcript: it will arrive as a file in a moment.
transcript-none = You have no finished consultation yet, so there is no transcript.
transcript-not-closed = The transcript is available when the consultation ends. /status shows the window.
transcript-caption = Transcript of consultation #{$id}
transcript-title = Consultation #{$id} · {$title} · {$desk}
transcript-window = Window: {$start} — {$end}
transcript-appeal = — Question #{$number} · accepted {$accepted} · due {$due} · answered {$answered}
transcript-not-answered = not yet
transcript-you = You
transcript-expert = Expert
transcript-bot = Bot
transcript-refused = (not passed to the expert: { $reason ->
        [window_closed] the window had closed
        [closed] the consultation had ended
        [no_appeals] no questions were left
        [refunded] the consultation was refunded
       *[other] refused
    })
transcript-failed = (could not be passed to the expert)
transcript-empty = (no messages)
transcript-footer = End of transcript. The consultation ended {$at}.
