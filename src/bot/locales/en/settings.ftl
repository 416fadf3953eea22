# /settings: the owner and admins change the desk from their private chat (src/bot/features/settings).

st-refused = Only the desk's owner and admins can change its settings.
st-home = Desk settings. What would you like to change?
st-btn-tariffs = 📋 Tariffs
st-btn-plans = 🔁 Plans
st-btn-hours = 🕒 Hours
st-btn-texts = 📄 Terms and privacy
st-btn-back = ← Back
st-btn-cancel = Cancel
st-cancelled = Cancelled; nothing was changed.
st-gone = This is no longer there: someone removed it meanwhile.
st-done = Saved.
st-saved = Saved. { $field } is now: { $value }
st-created = Created. Clients see it in /tariffs now, at { $value } ⭐.
st-conflict = Someone else changed the settings meanwhile, so nothing was saved. { $field } is now: { $value }
st-conflict-screen = Someone else changed the settings meanwhile, so nothing was saved. Here is what they are now.
st-invalid = { $field } was not accepted: { $reason }. Nothing was changed; try again or press Cancel.

st-tariffs = { $count ->
        [0] No tariffs yet.
        [one] One tariff. Choose it to change it:
       *[other] { $count } tariffs. Choose one to change it:
    }
st-tariff-button = { $title } — { $price } ⭐
st-tariff-button-paused = ⏸ { $title } — { $price } ⭐
st-btn-new-tariff = ➕ New tariff
st-tariff = { $title } ({ $state })
    Price: { $price } ⭐
    Window: { $hours ->
        [one] { $hours } hour
       *[other] { $hours } hours
    }
    Questions: { $questions }
    Answer within: { $sla } business hours
    Start: { $mode }
st-state-on-sale = on sale
st-state-paused = paused: clients do not see it and cannot pay for it; paid orders go on as sold
st-mode-immediate = at payment
st-mode-on_request = when the client presses Start
st-mode-scheduled = at announced times
st-btn-price = Price
st-btn-title = Title
st-btn-questions = Questions
st-btn-window = Window
st-btn-pause = ⏸ Pause sales
st-btn-resume = ▶️ Resume sales
st-btn-delete = 🗑 Delete
st-btn-delete-yes = Yes, delete
st-delete-confirm = Delete “{ $title }”? It will no longer be sold and unpaid invoices for it will be refused. Paid orders keep what they were sold.

st-plans = { $count ->
        [0] No plans yet.
        [one] One plan. A new price applies to new subscriptions only; current subscribers keep theirs.
       *[other] { $count } plans. A new price applies to new subscriptions only; current subscribers keep theirs.
    }
st-plan-button = { $title } — { $price } ⭐ / 30 days
st-plan-button-paused = ⏸ { $title } — { $price } ⭐ / 30 days
st-plan-state-paused = paused: not offered to new subscribers; current subscriptions renew as bought
st-plan = { $title } ({ $state })
    Price: { $price } ⭐ per 30 days (new subscriptions only)
    Questions per period: { $questions }

st-hours = Working hours (time zone: { $zone }):
st-hours-day = { $day }: { $hours }
st-day-off = day off
st-day-mon = Mon
st-day-tue = Tue
st-day-wed = Wed
st-day-thu = Thu
st-day-fri = Fri
st-day-sat = Sat
st-day-sun = Sun
st-holidays = Holidays: { $dates }
st-extra-days = Extra working days: { $dates }
st-btn-zone = Time zone
st-btn-add-holiday = ➕ Holiday
st-btn-add-extra = ➕ Extra working day
st-btn-remove-date = ✕ { $date }
st-zone-pick = The desk works in { $zone }. Choose its time zone:

st-texts = Terms (version { $version }) and privacy. A change of the terms is a new version: paid orders keep the terms they were sold with.
st-btn-terms = Terms ({ $lang })
st-btn-privacy = Privacy ({ $lang })
st-lang-ru = Russian
st-lang-en = English

st-ask-priceStars = Send the new price in whole Stars. Now: { $current }
st-ask-title = Send the new title. Now: { $current }
st-ask-appeals = Send how many questions the tariff includes. Now: { $current }
st-ask-questions = Send how many questions a period includes. Now: { $current }
st-ask-windowHours = Send the window in hours. Now: { $current }
st-ask-weekday = Send the hours, e.g. “10:00-18:00” or “10:00-13:00, 14:00-18:00”; “-” for a day off. Now: { $current }
st-ask-holiday = Send the holiday's date as YYYY-MM-DD, e.g. 2026-12-31. Holidays now: { $current }
st-ask-extra = Send the date and hours of an extra working day, e.g. “2026-12-05 10:00-15:00”. Now: { $current }
st-ask-terms = Send the new terms text. Now:
    { $current }
st-ask-privacy = Send the new privacy text. Now:
    { $current }

st-new-code = New tariff. Send a short code for it (a-z, 0-9, “-” or “_”), e.g. “quick”.
st-new-title = Its title, as clients will see it:
st-new-priceStars = Its price in whole Stars:
st-new-windowHours = How many hours the window lasts:
st-new-appeals = How many questions it includes:
st-new-slaBusinessHours = Within how many business hours each question is answered:
st-new-startMode = When does the window start?

st-field-code = Code
st-field-title = Title
st-field-priceStars = Price
st-field-windowHours = Window
st-field-appeals = Questions
st-field-questions = Questions
st-field-slaBusinessHours = Answer time
st-field-startMode = Start
st-field-weekday = Hours
st-field-weekly = Hours
st-field-schedule = Schedule
st-field-holiday = Holiday
st-field-holidays = Holidays
st-field-extra = Extra working day
st-field-extraWorkingDays = Extra working days
st-field-timezone = Time zone
st-field-terms = Terms
st-field-text = Text
st-field-privacy = Privacy

order-refused-tariff-paused = Sales of this tariff are paused; nothing was charged. See /tariffs for what is on offer.
plan-refused-plan-paused = New subscriptions to this plan are paused. See /plan for what is on offer.
