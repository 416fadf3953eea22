# /report in the staff group (src/bot/features/report.ts, src/reports). Staff texts: the desk's default language.

report-usage = Usage: /report [7d | YYYY-MM-DD | YYYY-MM-DD YYYY-MM-DD]. Without arguments: the last 30 days.
report-admins-only = Only desk admins can see the report.
report-title = 📊 Report {$from} — {$to} ({$zone})
report-revenue = 💰 Revenue: paid {$paid} ⭐ ({$paidCount} { $paidCount ->
        [one] payment
       *[other] payments
    }), refunded {$refunded} ⭐ ({$refundedCount}), net {$net} ⭐
report-consultations = 📦 Consultations paid in the period, by state now: {$list}
report-state-waiting = waiting for the start
report-state-active = active
report-state-closed = closed
report-state-revoked = refunded
report-appeals = ❓ Questions accepted: {$accepted}; answered in time {$inTime}, answered late {$late}; breached {$breached}; still open {$open} (past due {$openBreached})
report-experts-title = ⏱ Median first response, business minutes:
report-expert-line = • {$who}: {$median} min over {$answered} { $answered ->
        [one] answer
       *[other] answers
    } ({$inTime} in time)
report-who-anonymous = anonymous admin
report-who-admin = admin id {$id}
report-who-expert = expert id {$id}
report-who-other = id {$id}
report-nearest-title = 🔜 Open questions nearest to breach:
report-nearest-line = • consultation #{$consultation}, question #{$number}: due {$due}, {$left}
report-nearest-left = {$left} of business time left
report-nearest-over = past due
report-ledger-title = 🚫 Ledger refusals by reason:
report-refusal-line = • {$reason} ({$account}): {$count}
report-admission-title = 🚫 Client messages refused, by reason:
report-admission-line = • {$reason}: {$count}
report-none = none
