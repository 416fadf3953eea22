# /report in the staff group (src/bot/features/report.ts, src/reports). Staff texts: the desk's default language.

report-usage = Usage: /report [7d | YYYY-MM-DD | YYYY-MM-DD YYYY-MM-DD]. Without arguments: the last 30 days.
report-admins-only = Only desk admins can see the report.
report-title = 📊 Report {$from} — {$to}
report-group-only = 👥 This staff group only ({$chat}): its consultations, their payments and questions. The whole desk: /report in the home group.
report-groups = 👥 Staff groups now:
    {$list}
report-group-line = • {$chat}: {$active ->
    [one] {$active} live consultation
   *[other] {$active} live consultations
}, {$open ->
    [one] {$open} open question
   *[other] {$open} open questions
}
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

# Reasons and accounts in words (the codes stay in the database and the audit log).
report-reason = { $reason ->
        [exhausted] nothing left
        [held_by_active] the rest held by open requests
        [over_concurrency] too many requests at once
        [no_account] no allowance for it
        [inactive] the allowance is closed (refunded or out of its period)
        [no_consultation] no paid consultation
        [not_started] the window had not started
        [window_closed] the window had closed
        [closed] the consultation had ended
        [no_appeals] no questions left
        [refunded] the consultation was refunded
        [banned] the client is banned
        [unavailable] the desk was unavailable
       *[other] {$reason}
    }
report-account = { $account ->
        [consultation-appeals] questions of a consultation
        [consultation-drafts] AI drafts of a consultation
        [expert-drafts] an expert's AI drafts
        [expert-llm_money] an expert's AI budget
        [expert-llm_tokens] an expert's AI tokens
        [desk-llm_money] the desk's AI budget
        [desk-llm_tokens] the desk's AI tokens
        [desk-capacity-starts] places for a start
       *[other] {$account}
    }
