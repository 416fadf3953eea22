# /paysupport, the dispute desk and admin payment tools (paysupport.ts, admin-payments.ts, disputes/*, payments/*).

ps-ask-payment = Which payment is it about? (Your recent payments by date and tariff.)
ps-no-payments = We see no payments from you. If you paid and it is not here, choose “Not in the list” and describe what happened.
ps-payment-button = {$date} · {$title} · {$amount} ⭐
ps-payment-button-refunded = {$date} · {$title} · {$amount} ⭐ (refunded)
ps-other = Not in the list / another problem
ps-cancel = Cancel
ps-ask-reason = Please describe the problem in one message, as a reply to this message (what happened and what you expect). While a consultation is open, messages that are not a reply go to your expert as usual. To stop: Cancel above or /cancel.
ps-reason-placeholder = What happened and what you expect
ps-pick-button = Please choose one of the buttons above.
ps-cancelled = Cancelled. You can write to /paysupport any time.
ps-too-short = Please describe the problem in a few words.
ps-payment-unknown = We could not find that payment. Please start again with /paysupport.

dispute-opened = 🧾 Your ticket no. {$ticket} is open. An administrator will answer here by {$by}. You do not need to write again; to add something, use /paysupport.
dispute-appended = 🧾 Added to your ticket no. {$ticket}. An administrator will answer here by {$by}.
dispute-declined = 🧾 Ticket no. {$ticket}: the request was declined. Reason: {$reason}
dispute-closed = 🧾 Ticket no. {$ticket} is closed. If something is still wrong, write to /paysupport again.
dispute-reason-refund-request = Refund requested for order {$order} (“{$title}”): paid after the held place expired.

dispute-topic-name = 🧾 #{$ticket} · {$name} · paysupport
dispute-card-title = 🧾 Ticket no. {$ticket} (/paysupport)
dispute-card-client = Client: {$name} {$username} · id {$id} · language {$lang}
dispute-card-reason = Reason: {$reason}
dispute-card-payment = Payment: {$amount} ⭐ · charge {$charge} · {$at} · { $kind ->
        [payment] payment
        [overpayment] overpayment
        [unmatched] matches no order
       *[other] {$kind}
    } · refunded: {$refunded}
dispute-card-no-payment = Payment: not chosen by the client (“not in the list”).
dispute-card-orders = Orders:
dispute-card-order = • order {$order} · {$title} · {$price} ⭐ · { $state ->
        [created] awaiting payment
        [reserved] awaiting payment
        [paid_waiting] paid, waiting for the start
        [active] running
        [closed] closed
        [refunded] refunded
        [cancelled] cancelled
       *[other] {$state}
    } · consultation: { $consultation ->
        [waiting] waiting for the start
        [active] running
        [closed] closed
        [revoked] refunded
       *[other] none
    }, until {$until}
dispute-card-promised = The client was promised an answer by {$by}.
dispute-card-help = Messages here are copied to the client; messages starting with {$prefix} stay in the topic.
dispute-client-added = The client adds: {$text}
dispute-topic-resolved = Ticket no. {$ticket}: { $state ->
        [open] open
        [refunded] refunded
        [declined] declined
        [closed] closed
       *[other] {$state}
    } by {$by}. {$resolution}
dispute-refund-confirm = Refund the payment of ticket no. {$ticket} in full? This cannot be undone.
dispute-refund-no-payment = Ticket no. {$ticket} has no payment linked. Use /refund <charge id> if you found it.
dispute-not-open = Ticket no. {$ticket} is no longer open ({ $state ->
        [open] open
        [refunded] refunded
        [declined] declined
        [closed] closed
       *[other] {$state}
    }); nothing was changed.
dispute-unknown = Ticket no. {$ticket} does not exist on this desk.
dispute-decline-ask = Ticket no. {$ticket}: write the reason for declining as your next message in this topic. The client will receive it.

btn-refund = ↩️ Refund
btn-refund-yes = Yes, refund
btn-refund-payment = ↩️ Refund payment {$payment}
btn-decline = ✖️ Decline
btn-close = ✔️ Close
btn-cancel = Cancel
admin-only = Only the desk's administrators can do this.

refund-confirm = Refund payment {$payment} ({ $kind ->
        [payment] payment
        [overpayment] overpayment
        [unmatched] matches no order
       *[other] {$kind}
    }): {$amount} ⭐ to user {$user}, charge {$charge}? This cannot be undone.
refund-ok = ✅ Refunded: payment {$payment}, {$amount} ⭐ to user {$user} (charge {$charge}).
refund-ok-already-at-telegram = ✅ Telegram says charge {$charge} was already refunded; payment {$payment} is now marked refunded ({$amount} ⭐, user {$user}).
refund-already = Payment {$payment} (charge {$charge}) is already refunded; nothing was done.
refund-in-progress = A refund of payment {$payment} is already in progress; wait a minute and check /refunds.
refund-unknown = No such payment on this desk; nothing was done.
refund-unknown-id = No payment {$payment} on this desk; nothing was done.
refund-unknown-charge = No payment with charge id “{$charge}” on this desk; nothing was done.
refund-failed = ❌ Refund of payment {$payment} (charge {$charge}) failed; nothing was changed. Telegram answered: {$description}
refund-cancelled = Refund cancelled.
refund-usage = Usage: /refund <telegram charge id> or /refund #<payment id>.
queue-empty = Nothing waits for a refund or a start date.
queue-title = Waiting for an administrator:
queue-payment = • payment {$payment} · { $kind ->
        [payment] payment
        [overpayment] overpayment
        [unmatched] matches no order
       *[other] {$kind}
    } · {$amount} ⭐ · user {$user} · order {$order} · charge {$charge}
queue-waiting = • order {$order} · {$title} · {$amount} ⭐ · user {$user}: paid after the hold expired, needs a start date or a refund (payment {$payment})

admin-pay-unmatched = ⚠️ Payment {$payment}: {$amount} ⭐ from user {$user} (charge {$charge}) names no order of this desk (order {$order}). Recorded as unmatched; refund it or sort it out.
admin-overpayment = ⚠️ Overpayment {$payment}: order {$order} (“{$title}”) was already paid; user {$user} paid {$amount} ⭐ again (charge {$charge}). Refund it.
admin-pay-late = ⚠️ Late payment {$payment}: order {$order} (“{$title}”), user {$user}, {$amount} ⭐ — the hold expired and the start is full. The client was offered the next free starts or a refund.
admin-pay-mismatch = ⚠️ Payment {$payment} for order {$order}: {$amount} {$currency} does not match the price {$price} ⭐. Honoured; please check.
admin-refunded = ↩️ Payment {$payment} refunded: {$amount} ⭐ to user {$user} (charge {$charge}) by {$by} ({ $source ->
        [telegram] reported by Telegram
        [admin] an admin
        [client] at the client's request
        [dispute] from a ticket
       *[other] {$source}
    }).
admin-refund-unknown-charge = ⚠️ Telegram reports a refund of charge {$charge} ({$amount} ⭐, user {$user}) that is not in our payments.
admin-start-period-ended = ⚠️ Order {$order} (“{$title}”, user {$user}): the client did not start within the allowed period. They were offered a start date or a refund.

reconcile-started = Reconciliation with Telegram started; the report will follow here.
reconcile-clean = ✅ Reconciliation: {$tg} payments at Telegram, {$db} in our table, no mismatches.
reconcile-mismatches =
    ⚠️ Reconciliation: {$count} mismatches ({$tg} payments at Telegram, {$db} in our table):
    {$list}
    (and {$more} more)
reconcile-missing-in-db = • charge {$charge}: paid at Telegram ({$tg} ⭐, user {$user}), not in our payments
reconcile-missing-at-telegram = • charge {$charge}: in our payments ({$db} ⭐, user {$user}), not at Telegram
reconcile-amount-differs = • charge {$charge}: {$tg} ⭐ at Telegram, {$db} ⭐ in our table
reconcile-refund-missing-in-db = • charge {$charge}: refunded at Telegram, not marked refunded here
reconcile-refund-missing-at-telegram = • charge {$charge}: marked refunded here, no refund at Telegram
