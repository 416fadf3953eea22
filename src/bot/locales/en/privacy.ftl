privacy-mydata-queued = Preparing a file with everything this desk holds about you; it will arrive here shortly.
privacy-mydata-too-soon =
    Your file was prepared a moment ago and is on its way here (or already above).
    You can ask for a new one in { $minutes ->
        [one] a minute
       *[other] {$minutes} minutes
    }.
privacy-mydata-caption = Everything this desk holds about you (JSON): your profile, orders, payments, consultations, questions, the messages you sent and received, your ratings and comments, disputes with your follow-ups, and transcripts.
privacy-forget-confirm =
    Erase your personal data at this desk?
    Your name, username, language and time zone, the contents of your messages and of the expert's answers, your rating comments and your dispute texts will be erased; your topics in the staff group will be deleted with all their messages.
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
    • Your name, username, language and time zone, the messages of your consultations, your rating comments and dispute texts: as long as you use the desk, so the expert can answer and disputes can be handled; erased at once with /forget, and your topics in the staff group are deleted with their messages.
    • Orders and payments (Telegram charge id, amount, date, refunds) and consultation dates: kept after /forget as accounting records, which accounting and tax law requires to keep for years; they hold no names or message contents, and the desk does not delete them by itself.
    • Technical records of handled updates and sent messages: pruned after days.
    What /forget cannot erase: the messages in your own chat with the bot (you can delete them in Telegram), and the alerts about your questions in the experts' private chats once they are older than 48 hours (Telegram lets a bot delete its messages only within 48 hours of sending them); newer ones are deleted.
    /mydata — a file with everything we hold about you
    /forget — erase your personal data
