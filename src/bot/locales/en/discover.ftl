# Where a client finds the support plans next to the tariffs (/start, the list, /help, the menu; issue 22).

welcome-plans = Support plans (a set of questions every 30 days; renews until you cancel):
welcome-plan-line = • {$title} — {$price} ⭐ per 30 days
btn-tariffs-and-plans = 📋 Tariffs, plans and terms
tariffs-intro-with-plans = Choose a one-off consultation or a support plan to see what is included and the terms:
plan-list-button = 🔁 {$title} — {$price} ⭐ / 30 days
btn-all-tariffs-and-plans = « All tariffs and plans
help-plan = /plan — support plans: a set of questions every 30 days, your plan and its renewal
help-data =
    /mydata — a file with everything this desk holds about you
    /forget — erase your personal data (after a confirmation)
cmd-mydata = My data
