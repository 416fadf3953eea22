# Tariffs, orders and payments (src/bot/features/tariffs.ts, payments.ts, status.ts, terms.ts).
# Ids arrive as strings (no digit grouping); amounts are whole Stars.

btn-tariffs = 📋 Tariffs and terms
tariffs-intro = Choose a tariff to see what is included, the terms and how the window starts:
tariff-button = {$title} — {$price} ⭐
tariff-gone = This tariff is no longer sold. Here is what is on offer now.
tariff-card-title = {$title} — {$price} ⭐
tariff-card-included = Included: { $appeals ->
        [one] {$appeals} question
       *[other] {$appeals} questions
    } (with its clarifications until the answer) within the window.
tariff-card-drafts = The expert may use AI drafts for your answers; every answer is checked and sent by the expert.
tariff-card-window = Access window: {$window}.
tariff-card-start = When it starts: {$start}
tariff-card-sla = Answers: within {$sla} of business time per accepted question. Hours: {$hours}.
tariff-card-refund-deliver = Refunds: if a payment is refunded, no new questions are accepted, but questions already accepted are still answered.
tariff-card-refund-stop = Refunds: if a payment is refunded, the consultation ends at once, including questions not answered yet.
tariff-card-late-none = A late answer: no compensation; the expert answers as soon as possible.
tariff-card-late-extend = A late answer: your window is extended by {$hours} h.
tariff-card-late-extra = A late answer: you get one extra question.
tariff-card-topups = Top-ups: more questions or hours can be bought inside the consultation; a refunded top-up takes back what it added and you have not used yet (questions not asked, hours not passed).
tariff-card-terms = Terms (version {$version}), accepted by paying:
start-mode-immediate = at payment.
start-mode-scheduled = at the start time you choose before paying.
start-mode-on-request = when you press “Start” after payment (within {$days} days, while the desk is open).
warn-desk-closed = ⚠️ The desk is closed now. Your {$window} window starts at once, with your payment, but the answer clock only runs from {$opens}.
warn-desk-closed-choice = ⚠️ The desk is closed now: the answer clock only runs from {$opens}. Choose below: start your {$window} window now, with your payment, or when the desk opens (the whole window then counts from the opening).
btn-pay-start-now = ▶️ Accept the terms, pay {$price} ⭐ and start now
btn-pay-start-at-opening = ⏳ Accept, pay {$price} ⭐, start when the desk opens ({$at})
order-start-at-opening = Your {$window} window starts when the desk opens, {$at}, and runs until {$end}. Until then nothing of it is used.
btn-accept-pay = ✅ Accept the terms and pay {$price} ⭐
btn-pick-slot = 🗓 Choose a start time
btn-all-tariffs = « All tariffs
btn-slot = {$at} · {$left} left
slots-pick = {$title}: choose when your window starts. The place is held for you while you pay.
slots-none = {$title}: all announced start times are taken. Join the waitlist of a start below, look again later or choose another tariff.
order-slot-chosen = Start: {$at}. The place is held for {$hold} minutes once you open the payment.
invoice-description-immediate = Consultation: { $appeals ->
        [one] {$appeals} question
       *[other] {$appeals} questions
    }, {$window} window from payment. Terms {$terms}.
invoice-description-scheduled = Consultation: { $appeals ->
        [one] {$appeals} question
       *[other] {$appeals} questions
    }, {$window} window from the chosen start. Terms {$terms}.
invoice-description-on_request = Consultation: { $appeals ->
        [one] {$appeals} question
       *[other] {$appeals} questions
    }, {$window} window from when you press Start. Terms {$terms}.
invoice-description-at-opening = Consultation: { $appeals ->
        [one] {$appeals} question
       *[other] {$appeals} questions
    }, {$window} window from the desk's opening, {$at}. Terms {$terms}.

order-refused-tariff-unknown = This tariff is no longer sold; nothing was charged.
order-refused-terms-changed = The terms have changed since this message. Please read the current terms below before paying.
order-refused-slot-required = Please choose a start time first.
order-refused-slot-unknown = This start time is not offered any more. Please choose again.
order-refused-slot-started = This start time has already begun. Please choose a later one.
order-refused-banned = Purchases are not available for this account. If you think this is a mistake, write to /paysupport.
order-refused-slot-full = This start time has just been taken. Please choose another one.
order-refused-choose-start = The desk is closed now. Please choose when your window starts: now, or when the desk opens.
order-refused-opening-changed = The desk's opening time has changed since this message (or the desk is open now). Please choose again below.

precheckout-order-unknown = We cannot find this order. Please choose the tariff again with /tariffs.
precheckout-order-foreign = This invoice was issued to another account. Please open /tariffs and buy with your own.
precheckout-wrong-currency = This invoice is only payable in Telegram Stars.
precheckout-wrong-amount = The amount ({$amount} ⭐) does not match the order's price ({$price} ⭐). Please open a new invoice with /tariffs.
precheckout-order-cancelled = This order was cancelled. Please choose the tariff again with /tariffs.
precheckout-order-paid = This order is already paid; nothing more was charged. See /status.
precheckout-order-expired = This invoice has expired. Please open a new one with /tariffs.
precheckout-tariff-unavailable = “{$title}” is no longer sold; nothing was charged. See /tariffs for what is on offer.
precheckout-slot-started = This start time has already begun; nothing was charged. Please choose a later one with /tariffs.
precheckout-capacity-full = All places for this start are taken right now; nothing was charged. Please try another day or start time.
precheckout-banned = Purchases are not available for this account; nothing was charged.
precheckout-unavailable = The desk is temporarily unavailable; nothing was charged. Please try again in a minute.

consultation-activated =
    ✅ Your consultation “{$title}” is active.
    Window: {$start} — {$end}.
    Send your question here; details sent in further messages belong to it until the answer comes. Each accepted question is answered within {$sla} of business time. Questions accepted before the window closes are answered after it too.
consultation-activated-closed = ⏳ The desk is closed now: the expert's answers start when it opens, {$opens}. You can send your question already; its answer clock starts then.
pay-confirm-on-request =
    ✅ Payment received: {$amount} ⭐ for “{$title}”.
    Your {$window} window starts when you press “Start” (while the desk is open, until {$startBy}). Prepare your task and press Start when you are ready.
pay-confirm-at-opening =
    ✅ Payment received: {$amount} ⭐ for “{$title}”.
    Your window starts when the desk opens: {$start} — {$end}. We will write when it opens; you can send your questions from then on.
pay-confirm-scheduled =
    ✅ Payment received: {$amount} ⭐ for “{$title}”.
    Your window: {$start} — {$end}. We will write when it opens; from then on send your questions here.
pay-late =
    ✅ Payment received: {$amount} ⭐ for “{$title}” (order {$order}).
    The place held for you expired before the payment arrived, and that start is now full. Your payment is safe. Choose one of the next free starts below, or ask for a refund.
pay-late-no-options =
    ✅ Payment received: {$amount} ⭐ for “{$title}” (order {$order}).
    The place held for you expired before the payment arrived, and there is no free start right now. Your payment is safe: an administrator will offer you a start date, or you can ask for a refund.
pay-overpaid =
    This order (“{$title}”, order {$order}) was already paid, so this second payment of {$amount} ⭐ is extra. Nothing changes in your consultation; an administrator will refund the extra payment.
pay-unmatched = We received {$amount} ⭐ but could not match the payment to an order. Nothing is lost: an administrator will sort it out or refund it. You can also write to /paysupport.
btn-start = ▶️ Start
btn-start-at = ▶️ Start {$at}
btn-ask-refund = ↩️ Ask for a refund
btn-pick-start = 🗓 Choose a start
start-scheduled-ok = Start agreed. We will write when your window opens.
start-options = “{$title}”: choose a start:
start-options-none = “{$title}”: there is no free start right now. An administrator will contact you, or you can ask for a refund.
order-start-agreed = 🗓 “{$title}”: your window starts {$at}. We will write when it opens.
order-start-period-ended = The period to start “{$title}” (order {$order}) has ended. Choose a start below, or ask for a refund.

start-refused-order-unknown = We cannot find this order.
start-refused-not-waiting = This order is not waiting for a start.
start-refused-already-active = This consultation has already started. See /status.
start-refused-refunded = This order was refunded.
start-refused-desk-closed = The desk is closed now. Your window can start when it opens: {$at}.
start-refused-start-expired = The period to start this order has ended. Choose a start in the message above or write to /paysupport.
start-refused-day-full = All places for today are taken. The next free start: {$at}.
start-refused-needs-start-date = Please choose a start date for this order first.
start-refused-option-gone = This start is no longer available. Please choose another one.
button-outdated = This button is outdated.

refund-done = ↩️ {$amount} ⭐ have been refunded to you.
refund-done-consultation-deliver = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The consultation is closed for new questions; answers to questions already accepted will still be delivered.
refund-done-consultation-stop = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The consultation is closed, including questions not answered yet.

status-title = { $own ->
        [yes] Your orders:
       *[no] Your orders ({$zone}):
    }
status-empty = You have no orders yet.
status-created = Order {$order} · {$title} — awaiting payment ({$price} ⭐).
status-reserved = Order {$order} · {$title} — awaiting payment ({$price} ⭐).
status-active = Order {$order} · {$title} — ✅ active: {$start} — {$end}.
status-closed = Order {$order} · {$title} — closed (window {$start} — {$end}).
status-refunded = Order {$order} · {$title} — refunded.
status-waiting-start = Order {$order} · {$title} — paid; press Start when ready (until {$startBy}).
status-scheduled = Order {$order} · {$title} — paid; starts {$start}.
status-needs-start = Order {$order} · {$title} — paid; a start date needs to be chosen.
btn-start-order = ▶️ Start order {$order}
btn-pick-start-order = 🗓 Choose a start for order {$order}
tz-change-button = 🕒 Change time zone
tz-pick = Times are shown in {$zone} now. Choose your time zone:
tz-set = Time zone set: {$zone}.
tz-city = { $zone ->
        [Europe-Kaliningrad] Kaliningrad
        [Europe-Moscow] Moscow
        [Europe-Samara] Samara
        [Asia-Yekaterinburg] Yekaterinburg
        [Asia-Omsk] Omsk
        [Asia-Novosibirsk] Novosibirsk
        [Asia-Krasnoyarsk] Krasnoyarsk
        [Asia-Irkutsk] Irkutsk
        [Asia-Vladivostok] Vladivostok
        [Europe-London] London
        [Europe-Berlin] Berlin
        [Asia-Tbilisi] Tbilisi
        [Asia-Almaty] Almaty
        [Asia-Dubai] Dubai
        [America-New_York] New York
        [UTC] UTC
       *[other] {$name}
    }

terms-title = Terms (version {$version})
terms-tariff = {$title}: {$refund} {$late}
terms-tariffs-title = Refunds and late answers, by tariff:
terms-footer = Payment problems: /paysupport. Privacy: /privacy.
privacy-title = Privacy

# Moving or cancelling a scheduled start (src/bot/features/change-start.ts, src/payments/change-start.ts).
btn-move-start = 🗓 Move order {$order}
btn-cancel-start = ✖️ Cancel order {$order}
btn-cancel-start-yes = Yes, cancel and refund
status-change-closed = Moving or cancelling was possible until {$deadline}; the start is too close now.
change-pick = “{$title}” starts {$at}. Choose another start (changes are possible until {$deadline}):
change-no-slots = “{$title}”: no other start has a free place right now.
order-start-moved = 🗓 “{$title}” (order {$order}) now starts {$at}. We will write when your window opens.
change-cancel-confirm = Cancel “{$title}” and get {$amount} ⭐ back?
change-cancel-failed = The refund did not go through; nothing was changed. Please try again or write to /paysupport.
change-cancel-in-progress = The refund is already under way.
change-refused-unknown = This order cannot be changed from this account.
change-refused-not-waiting = This order is not a paid start waiting to begin, so it cannot be moved or cancelled here. For a problem write to /paysupport.
change-refused-too-late = Moving or cancelling was possible until {$deadline}; the start is too close now. For a problem write to /paysupport.
change-refused-started = This consultation has already started, so it can no longer be moved or cancelled (that was possible until {$deadline}). For a problem write to /paysupport.
change-refused-slot-gone = This start is not offered any more. Please choose another one.
change-refused-slot-full = This start has just been taken. Please choose another one.

# A desk being set up (issue 24): nothing is sold until it has an owner, a staff group and a tariff.
desk-not-open = {$desk} is not taking orders yet: nothing can be bought here until it is set up. Please come back later.
order-refused-not-open = Nothing can be bought here yet; nothing was charged.
