# Support plans paid by a Stars subscription (src/bot/features/subscriptions.ts, src/subscriptions).

plan-none-offered = No support plans are offered at the moment. See /tariffs for one-off consultations.
plan-card-title = {$title} — {$price} ⭐ per 30 days
plan-card-questions = Included: { $questions ->
    [one] {$questions} question
   *[other] {$questions} questions
} per period.
plan-card-drafts = Experts may use up to {$drafts} AI drafts per period; every answer is checked and sent by an expert.
plan-card-sla = Answers: within {$sla} of business time per question.
plan-card-sla-priority = Priority answers: within {$sla} of business time per question (half the usual {$standard}), and your questions reach the experts before others.
plan-card-attachments-yes = Photos and files with your questions: included.
plan-card-attachments-no = Photos and files: not included in this plan; questions are accepted as text.
plan-card-transcript-yes = Transcript file of your conversation (/transcript): included.
plan-card-transcript-no = Transcript file (/transcript): not included in this plan. Your own data is always yours: /mydata sends everything we hold about you, the conversation included.
plan-card-carry-none = Unused questions do not carry over to the next period.
plan-card-carry-capped = Unused questions carry over to the next period, up to {$max}.
plan-card-refund-revoke_now = Refund of a period: access ends at once and the rest of the period is void.
plan-card-refund-keep_used = Refund of a period: what was used stays used, unused questions are void; accepted questions are still answered.
plan-card-change = Changing plan later (bigger or smaller): a new subscription at the other plan's price. Its first payment buys that plan's first 30 days, which start when the time you have paid for ends; the current subscription then stops renewing. No day is paid twice and there is no gap; unused questions move over as at a renewal.
plan-card-terms = Terms (version {$version}), accepted by subscribing:
plan-btn-subscribe = ✅ Accept the terms and subscribe — {$price} ⭐ / 30 days
plan-btn-subscribe-price = {$price} ⭐ / 30 days
plan-btn-pay = Pay {$price} ⭐
plan-link = {$title}: open the link below to subscribe ({$price} ⭐ every 30 days; you can cancel renewal any time with /plan).
plan-change-offer =
    Change to “{$title}”: {$price} ⭐ every 30 days.
    Your current plan “{$from}” stays as it is until {$start}. Paying the link below buys the new plan's first 30 days, {$start} – {$end}; the current subscription then stops renewing (nothing more is charged for it). No day is paid twice and there is no gap.
    { $carry ->
        [0] Unused questions of the current period do not move to the new plan.
       *[other] Up to {$carry} unused { $carry ->
            [one] question moves
           *[other] questions move
        } to the new plan's first period.
    }
    Telegram then charges {$price} ⭐ every 30 days counted from this payment; each charge buys the next 30 days of the new plan, until you cancel renewal with /plan.
plan-change-description = Support plan: { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    } every 30 days, from {$start}. Terms {$terms}.
plan-invoice-description = Support plan: { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    } every 30 days. Terms {$terms}.
plan-view =
    Your plan: {$title}
    Period {$number}: {$start} – {$end}
    Questions: {$used} used, {$held} awaiting an answer, {$left} of {$total} left.
plan-view-renews = Next renewal: {$end}, {$price} ⭐.
plan-view-cancelled = Renewal is cancelled; access until {$end}.
plan-view-next = From {$start}: “{$title}”, {$price} ⭐ per 30 days, already paid (your change of plan).
plan-ended = Your plan “{$title}” ended on {$end}; subscribe again to continue.
plan-btn-change = 🔁 Change plan
plan-btn-cancel = ✖️ Cancel renewal
plan-btn-resume = ▶️ Resume renewal
plan-cancelled = Renewal is cancelled. Your plan stays active until {$end}; you can resume it until then with /plan.
plan-resumed = Renewal is resumed: the plan renews on {$end}.
plan-no-change = There is no other plan to change to.
plan-pick-change = Choose the plan to change to. A change is a new subscription at that plan's price, starting when your paid time ends ({$start}); the current one then stops renewing:
plan-refused-duplicate = Already handled.
plan-refused-plan-unknown = This plan is no longer offered; nothing was charged. See /plan.
plan-refused-terms-changed = The plan's terms have changed since this message. Please read the current terms with /plan.
plan-refused-banned = Purchases are not available for this account. If you think this is a mistake, write to /paysupport.
plan-refused-already-subscribed = You already have an active plan: see /plan.
plan-refused-not-subscribed = You have no active plan. See /plan to subscribe.
plan-refused-no-subscription = You have no plan. See /plan to subscribe.
plan-refused-not-active = Your plan is not active any more, so its renewal cannot be changed.
plan-refused-same-plan = That is already your plan.
precheckout-plan-changed = Your plan has changed since this link was made, so this payment was not taken. Please ask for a new one with /plan.

sub-started = ✅ Your plan “{$title}” is active: { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    } from {$start} to {$end}. Just write your question here. /plan shows your numbers.
sub-changed = 🔁 Change of plan paid: “{$title}”, {$price} ⭐ every 30 days. Your current plan “{$from}” stays until {$start}; then the new plan's first period runs {$start} – {$end} with { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    }. The old subscription will not renew.
sub-renewal-reminder = 🔔 Your plan “{$title}” renews on {$when}: {$price} ⭐ for another 30 days ({ $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    }). To stop it, cancel the renewal below or with /plan; your access runs to the end of the paid period.
sub-charge-refused = We received {$amount} ⭐ for “{$title}”, but this charge does not match your plan, so nothing was added for it. An admin will refund it; see /paysupport.
sub-charge-refused-plan-deleted = The plan “{$title}” was withdrawn a moment before your payment of {$amount} ⭐ arrived, so it was not started and will not renew. The {$amount} ⭐ are being refunded to you in full; nothing else is needed from you.
sub-renewed = 🔄 “{$title}” renewed: period {$number}, {$start} – {$end}, { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    } ({$carried} carried over).
sub-renewed-ahead = 🔄 “{$title}” renewed ahead: period {$number}, {$start} – {$end}, { $questions ->
        [one] {$questions} question
       *[other] {$questions} questions
    }; up to {$max} unused from the period before move in when it starts.
sub-lapsed = Your plan “{$title}” ended on {$end}: no renewal arrived. New questions are not accepted; questions accepted earlier are still answered. Subscribe again with /plan.
sub-refused-no-questions = {$left} of {$total} { $total ->
        [one] question
       *[other] questions
    } left in this period ({$held} awaiting an answer); the next period starts on {$next}. Nothing was counted.
sub-refused-no-questions-cancelled = {$left} of {$total} { $total ->
        [one] question
       *[other] questions
    } left in this period ({$held} awaiting an answer). Renewal is cancelled; access until {$end}. Nothing was counted.
sub-refused-ended = Your plan ended on {$end}; renew to continue (/plan). This message was not passed to the expert.
sub-refused-renewal-pending = Your period ended on {$end} and its renewal has not arrived yet, so this message was not passed to the expert. Nothing was counted; please write again once the plan renews (/plan).
sub-refused-refunded = Your plan was refunded, so new questions are not accepted. Answers to questions accepted earlier still arrive here.
sub-refused-not-in-plan = Attachments are not included in your plan, so this message was not passed to the expert. Nothing was counted; please send your question as text.
refund-done-plan-revoke_now = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The plan has ended now, including questions not answered yet.
refund-done-plan-keep_used = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The plan has ended: what was used stays used, the unused questions are void, and questions already accepted will still be answered.
cmd-plan = My support plan
desk-card-plan = 🔁 Plan: period {$number}, {$start} — {$end}; {$renewal}
desk-card-plan-renews = renews at the end
desk-card-plan-cancelled = renewal cancelled
desk-card-plan-lapsed = lapsed
desk-card-plan-refunded = refunded
desk-card-plan-replaced = replaced by a change of plan
admin-plan-charge-refused-amount = ⚠️ Plan charge {$payment}: user {$user} was charged {$amount} ⭐ (charge {$charge}) for order {$order} (“{$title}”), whose subscription's price is {$price} ⭐. Nothing was granted; recorded as an overpayment. Refund it.
admin-plan-charge-refused-ended = ⚠️ Plan charge {$payment}: user {$user} was charged {$amount} ⭐ (charge {$charge}) for order {$order} (“{$title}”), a subscription that is { $state ->
        [active] active
        [lapsed] lapsed
        [refunded] refunded
        [replaced] replaced by a change of plan
       *[other] {$state}
    } and should not renew. Nothing was granted; recorded as an overpayment. Refund it.
admin-plan-charge-refused-change-void = ⚠️ Plan charge {$payment}: user {$user} paid {$amount} ⭐ (charge {$charge}) for a change of plan (order {$order}, “{$title}”) whose old plan is no longer active. Nothing was granted, its renewal is cancelled; recorded as an overpayment. Refund it.
admin-plan-charge-refused-plan-deleted = ⚠️ Plan charge {$payment}: user {$user} paid {$amount} ⭐ (charge {$charge}) for “{$title}” (order {$order}) just after the plan was deleted. Nothing was started and its renewal is cancelled; the {$amount} ⭐ are being refunded automatically (the button is here in case that fails).
