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
plan-card-terms = Terms (version {$version}), accepted by subscribing:
plan-btn-subscribe = ✅ Accept the terms and subscribe — {$price} ⭐ / 30 days
plan-btn-pay = Pay {$price} ⭐
plan-link = {$title}: open the link below to subscribe ({$price} ⭐ every 30 days; you can cancel renewal any time with /plan).
plan-upgrade-link = Upgrade to {$title}: open the link below to pay the difference ({$price} ⭐, once). The new plan applies at once.
plan-invoice-description = Support plan: {$questions} questions every 30 days. Terms {$terms}.
plan-upgrade-description = Upgrade of your support plan for the rest of this period: {$questions} questions. Terms {$terms}.
plan-view =
    Your plan: {$title}
    Period {$number}: {$start} – {$end}
    Questions: {$used} used, {$held} awaiting an answer, {$left} of {$total} left.
plan-view-renews = Next renewal: {$end}.
plan-view-cancelled = Renewal is cancelled; access until {$end}.
plan-view-next = From the next renewal: {$title}.
plan-ended = Your plan “{$title}” ended on {$end}; subscribe again to continue.
plan-btn-upgrade = ⬆️ Upgrade
plan-btn-change = 🔁 Change plan at renewal
plan-btn-cancel = ✖️ Cancel renewal
plan-btn-resume = ▶️ Resume renewal
plan-cancelled = Renewal is cancelled. Your plan stays active until {$end}; you can resume it until then with /plan.
plan-resumed = Renewal is resumed: the plan renews on {$end}.
plan-no-upgrade = There is no bigger plan to upgrade to.
plan-no-change = There is no other plan to change to.
plan-pick-upgrade = Choose the plan to upgrade to (you pay the difference now; it applies at once):
plan-pick-change = Choose the plan for your next period (applies at the next renewal):
plan-change-scheduled = From your next renewal your plan will be “{$title}”.
plan-refused-duplicate = Already handled.
plan-refused-plan-unknown = This plan is no longer offered; nothing was charged. See /plan.
plan-refused-terms-changed = The plan's terms have changed since this message. Please read the current terms with /plan.
plan-refused-banned = Purchases are not available for this account. If you think this is a mistake, write to /paysupport.
plan-refused-already-subscribed = You already have an active plan: see /plan.
plan-refused-not-subscribed = You have no active plan. See /plan to subscribe.
plan-refused-not-an-upgrade = That plan is not bigger than yours; use “Change plan at renewal” instead.
plan-refused-no-subscription = You have no plan. See /plan to subscribe.
plan-refused-not-active = Your plan is not active any more, so its renewal cannot be changed.
plan-refused-same-plan = That is already your plan.

sub-started = ✅ Your plan “{$title}” is active: {$questions} questions from {$start} to {$end}. Just write your question here. /plan shows your numbers.
sub-renewed = 🔄 “{$title}” renewed: period {$number}, {$start} – {$end}, {$questions} questions ({$carried} carried over).
sub-upgraded = ⬆️ Upgraded to “{$title}”: {$added} questions added to this period.
sub-upgrade-orphan = We received {$amount} ⭐ for an upgrade, but you have no active plan. An admin will refund it; see /paysupport.
sub-lapsed = Your plan “{$title}” ended on {$end}: no renewal arrived. New questions are not accepted; questions accepted earlier are still answered. Subscribe again with /plan.
sub-refused-no-questions = {$left} of {$total} questions left in this period ({$held} awaiting an answer); the next period starts on {$next}. Nothing was counted.
sub-refused-no-questions-cancelled = {$left} of {$total} questions left in this period ({$held} awaiting an answer). Renewal is cancelled; access until {$end}. Nothing was counted.
sub-refused-ended = Your plan ended on {$end}; renew to continue (/plan). This message was not passed to the expert.
sub-refused-renewal-pending = Your period ended on {$end} and its renewal has not arrived yet, so this message was not passed to the expert. Nothing was counted; please write again once the plan renews (/plan).
sub-refused-refunded = Your plan was refunded, so new questions are not accepted. Answers to questions accepted earlier still arrive here.
sub-refused-not-in-plan = Attachments are not included in your plan, so this message was not passed to the expert. Nothing was counted; please send your question as text.
refund-done-plan-revoke_now = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The plan has ended now, including questions not answered yet.
refund-done-plan-keep_used = ↩️ {$amount} ⭐ for “{$title}” have been refunded to you. The plan has ended: what was used stays used, the unused questions are void, and questions already accepted will still be answered.
refund-done-plan-upgrade = ↩️ {$amount} ⭐ for the upgrade have been refunded to you. What the upgrade added and you have not used is void; your plan is back to the previous one.
cmd-plan = My support plan
desk-card-plan = 🔁 Plan: period {$number}, {$start} — {$end}; {$renewal}
desk-card-plan-renews = renews at the end
desk-card-plan-cancelled = renewal cancelled
desk-card-plan-lapsed = lapsed
desk-card-plan-refunded = refunded
