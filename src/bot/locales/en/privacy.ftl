privacy-mydata-queued = Preparing a file with everything this desk holds about you; it will arrive here shortly.
privacy-mydata-too-soon =
    Your file was prepared a moment ago and is on its way here (or already above).
    You can ask for a new one in { $minutes ->
        [one] a minute
       *[other] {$minutes} minutes
    }.
privacy-mydata-caption = Everything this desk holds about you (JSON): your profile, orders, payments, consultations, questions, messages, disputes and transcripts.
privacy-forget-confirm =
    Erase your personal data at this desk?
    Your name, username, language and time zone, the contents of your messages and of the expert's answers, and your dispute texts will be erased; your topics in the staff group will be closed.
    Kept for accounting: orders, payments (charge ids, amounts, dates, refunds) and consultation dates.
    This cannot be undone.
privacy-forget-yes = Erase my data
privacy-forget-no = Cancel
privacy-forget-cancelled = Nothing was erased.
privacy-forget-busy-consultation = You have a consultation that is paid, waiting or active: your data is needed to serve it. Use /forget again after it ends.
privacy-forget-busy-dispute = A payment dispute of yours is open: your data is needed to resolve it. Use /forget again once it is resolved.
privacy-forget-done = Done: your personal data and message contents at this desk are erased. Accounting records (orders, payments, dates) are kept as the law requires.
privacy-topic-forgotten = The client of consultation #{$id} used /forget: their name and message contents are erased. This topic is closed.
privacy-rights =
    What we keep, for how long, and why:
    • Your name, username, language and time zone, and the messages of your consultations: as long as you use the desk, so the expert can answer and disputes can be handled; erased at once with /forget.
    • Orders and payments (Telegram charge id, amount, date, refunds) and consultation dates: kept after /forget for the period accounting and tax law requires (5 years), to answer refunds and disputes.
    • Technical records of handled updates and sent messages: pruned after days.
    /mydata — a file with everything we hold about you
    /forget — erase your personal data
