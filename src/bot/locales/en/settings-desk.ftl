# /settings, the rest of the desk: more tariff and plan fields, new and deleted plans, staff groups, experts'
# days off, anti-flood (src/bot/features/settings).

st-btn-groups = 👥 Staff groups
st-btn-experts = 🧑‍💼 Experts
st-btn-antiflood = 🛡 Anti-flood
st-btn-sla = Answer time
st-btn-capacity = Per day
st-btn-slots = Start times
st-btn-slot-capacity = Clients per start
st-btn-breach = If late
st-btn-refund = On a refund
st-btn-carry = Carry-over
st-btn-topups = Top-ups
st-btn-new-plan = ➕ New plan

st-tariff-more = Consultations per day: { $capacity }
    If an answer is late: { $breach }
    On a refund: { $refund }
    Top-ups: { $topUps }
st-tariff-slots = Start times: { $slots } ({ $per } per start)
st-breach-none = nothing more
st-breach-extra_appeal = one more question
st-breach-extend_window = the window grows by { $hours } h
st-refund-deliver = accepted questions are still answered
st-refund-stop = everything stops
st-topup-questions = +{ $n } questions for { $price } ⭐
st-topup-hours = +{ $n } h for { $price } ⭐

st-plan-more = Answer within: { $sla } business hours
    On a refund: { $refund }
    Unused questions at renewal: { $carry ->
        [0] none move on
        [one] at most { $carry } moves to the next period
       *[other] at most { $carry } move to the next period
    }
st-plan-refund-keep_used = what was used is kept, the rest of the period ends
st-plan-refund-revoke_now = the subscription ends at once
st-plan-delete-confirm = Delete the plan “{ $title }”? It will no longer be offered. A plan with current subscribers cannot be deleted: pause it instead.
st-plan-delete-live = { $count ->
        [one] The plan has { $count } current subscriber, so it was not deleted. Pause it instead: new subscriptions stop, the current one runs as bought.
       *[other] The plan has { $count } current subscribers, so it was not deleted. Pause it instead: new subscriptions stop, the current ones run as bought.
    }
st-plan-created = Created. Clients see it in /plan now, at { $value } ⭐ per 30 days. Its terms start as the desk's; change them in Terms and privacy.

st-newplan-code = New plan. Send a short code for it (a-z, 0-9, “-” or “_”), e.g. “basic”.
st-newplan-title = Its title, as clients will see it:
st-newplan-priceStars = Its price per 30 days in whole Stars (at most 10000):
st-newplan-questions = How many questions a period includes:
st-newplan-slaBusinessHours = Within how many business hours each question is answered:

st-ask-slaBusinessHours = Send within how many business hours each question is answered. Now: { $current }
st-ask-dailyCapacity = Send how many consultations may start per day. Now: { $current }
st-ask-slotCapacity = Send how many clients each start time takes. Now: { $current }
st-ask-slots = Send the start times with their offset, separated by commas, e.g. “2026-12-05T10:00+01:00”; “-” for none. Now: { $current }
st-ask-breachPolicy = What happens when an answer is late: “none”, “extra” (one more question) or “extend 2” (the window grows by 2 hours). Now: { $current }
st-ask-refundPolicy = What a refund does to questions already accepted: “deliver” (still answered) or “stop” (everything stops). Now: { $current }
st-ask-planRefundPolicy = What a refunded period does: “keep_used” (what was used is kept, the rest ends) or “revoke_now” (the subscription ends at once). Now: { $current }
st-ask-carryOver = Send how many unused questions may move to the next period at a renewal (a number), or “none”. Now: { $current }
st-ask-topUps = Send the top-ups a client may buy, separated by commas, e.g. “2 questions 100, 1 hour 60” (questions or hours, then the price in Stars); “-” for none. Now: { $current }
st-ask-antiFlood = Send how many of a client's messages go into the topic one by one per minute (the rest come as one digest); 0 turns it off. Now: { $current }
st-ask-daysOff = Send the days off: weekdays (mon, tue, wed, thu, fri, sat, sun) and dates (YYYY-MM-DD), separated by commas; “-” for none. No new consultations are assigned on them. Now: { $current }

st-field-dailyCapacity = Consultations per day
st-field-slotCapacity = Clients per start
st-field-slots = Start times
st-field-breachPolicy = If late
st-field-refundPolicy = On a refund
st-field-carryOver = Carry-over
st-field-topUps = Top-ups
st-field-antiFlood = Anti-flood
st-field-perMinute = Anti-flood
st-field-daysOff = Days off

st-groups = { $count ->
        [0] No staff group yet. Add the bot to a forum supergroup as an admin to bind one.
        [one] The staff group:
       *[other] The staff groups:
    }
st-group-home = • { $title } (home group: admins and disputes)
st-group-listed = • { $title }
st-btn-unbind = Unbind «{ $title }»
st-btn-unbind-yes = Yes, unbind
st-unbind-confirm = Unbind «{ $title }»? New consultations will go to the other groups. A group with live consultations cannot be unbound. The bot stays in the group until you remove it.
st-unbind-confirm-last = Unbind «{ $title }», the desk's only staff group? Nothing is sold until another group is bound. A group with live consultations cannot be unbound.
st-group-unbind-live = { $count ->
        [one] { $count } live consultation is in this group, so it was not unbound. Unbind it once it has ended.
       *[other] { $count } live consultations are in this group, so it was not unbound. Unbind it once they have ended.
    }

st-experts = Staff and their days off (no new consultations are assigned on them):
st-expert-line = • { $name }: { $off }
st-btn-days-off = Days off: { $name }

st-group-moved = «{ $title }» became a supergroup with a new id; the desk now uses it as before.
