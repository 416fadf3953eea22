# Admin tools from Telegram (src/bot/features/admin-tools.ts) and the private alerts to the owner and admins.
adm-admins-only = Only the desk's admins can do this: you are an expert here. Ask an admin if it needs doing.
adm-no-longer-admin = You are no longer an admin of this desk, so nothing was changed. Ask the owner if it still needs doing.
adm-cancelled = Cancelled. Nothing was changed.
adm-btn-cancel = Cancel
adm-unknown-consultation = There is no consultation #{$consultation} on this desk.
adm-unknown-client = User {$user} has never written to this bot (or their data was erased), so there is nothing to change.

adm-startdate-usage = Usage: /startdate — the orders waiting for a start date; or /startdate <order> <YYYY-MM-DD> [HH:MM] — a start you choose, in the desk's time.
adm-startdate-none = No paid order is waiting for a start date.
adm-startdate-title = { $count ->
    [one] One paid order is waiting for a start date:
   *[other] {$count} paid orders are waiting for a start date:
}
adm-startdate-item = • order {$order}, “{$title}”, client {$user}: its next free starts are on the buttons.
adm-startdate-item-full = • order {$order}, “{$title}”, client {$user}: no free start; choose one yourself (the day gets one more place).
adm-startdate-own = Another date: /startdate <order> <YYYY-MM-DD> [HH:MM] (the desk's time).
adm-startdate-confirm = Start order {$order} (“{$title}”) at {$at}? If that day or slot is full, it gets one more place for this client. The client is told.
adm-btn-start-at = ▶️ Start {$at}
adm-btn-order-start-at = Order {$order}: {$at}
adm-start-scheduled = Order {$order}: the start is agreed for {$at}. The client has been told.
adm-start-activated = Order {$order}: the consultation has started now ({$at}). The client has been told.
adm-start-why = Order {$order}: { $code ->
    [order-unknown] there is no such order on this desk.
    [already-active] the consultation has already started.
    [refunded] the order was refunded.
    [not-waiting] it is not waiting for a start date (a start was agreed already).
   *[other] this start cannot be used (for a scheduled tariff, choose one of its future slots).
}

adm-grant-usage = Usage: /grant <consultation> [questions, 1–20; 1 if not given].
adm-granted = Consultation #{$consultation}: { $count ->
    [one] one more question granted
   *[other] {$count} more questions granted
}; the client can now ask {$left}. The client has been told.
adm-not-active = Consultation #{$consultation} is not active (it is {$state}): nothing was granted.
adm-granted-client = 🎁 The desk has granted you { $count ->
    [one] one more question
   *[other] {$count} more questions
}. You can now ask { $left ->
    [one] one question
   *[other] {$left} questions
} in this consultation.
adm-granted-topic = 🎁 {$by} granted { $count ->
    [one] one more question
   *[other] {$count} more questions
}; {$left} left.

adm-reopen-usage = Usage: /reopen <consultation> [hours, 1–2160; 24 if not given]. The window runs to its own end or for that many hours from now, whichever is later.
adm-reopened = Consultation #{$consultation} is open again until {$end}. The client has been told.
adm-not-closed = Consultation #{$consultation} cannot be reopened: it is {$state}. Only a closed consultation that was not refunded can be.
adm-reopen-plan = Consultation #{$consultation} belongs to a support plan: its window follows the plan's payments and is not reopened by hand.
adm-reopened-client = 🔓 “{$title}” is open again until {$end}. Send your questions here.
adm-reopened-topic = 🔓 {$by} reopened the consultation until {$end}.

adm-ban-usage = Usage: /{$cmd} <user id>. In a consultation's topic, /{$cmd} without arguments acts on its client.
adm-banned = User {$user} is banned: their messages are refused and reach nobody.
adm-unbanned = User {$user} is no longer banned.
adm-already-banned = User {$user} was already banned: nothing changed.
adm-not-banned = User {$user} is not banned: nothing changed.
adm-bans-none = Nobody is banned.
adm-bans-title = { $count ->
    [one] One banned client:
   *[other] {$count} banned clients:
}
adm-bans-item = • {$user} {$name}, since {$at}
adm-btn-unban = Unban {$user}

adm-tz-usage = Usage: /tz <user id> <time zone>, e.g. /tz 123456 Europe/Berlin.
adm-tz-set = User {$user} now sees times in {$zone}. They have been told.
adm-tz-unchanged = User {$user} already sees times in {$zone}: nothing changed.
adm-tz-bad = “{$zone}” is not a time zone (use a name like Europe/Berlin or Asia/Tbilisi).
adm-zone-client = 🕒 The desk has set your time zone to {$zone}: times are now shown in it. You can change it with /timezone.

adm-write-usage = Usage: /write <user id> <text>: a message from the desk to a client, outside any topic.
adm-written = Your message to {$user} is on its way.
adm-desk-message =
    ✉️ A message from the desk:

    {$text}

adm-stuck-none = Nothing is waiting for a person: no parked update and no dead letter.
adm-stuck-parked-title = { $count ->
    [one] One update failed five times and is parked:
   *[other] {$count} updates failed five times and are parked:
}
adm-stuck-parked-item = • update {$update} ({$kind}): {$error}
adm-stuck-dead-title = { $count ->
    [one] One job failed all its retries (dead letter):
   *[other] {$count} jobs failed all their retries (dead letters):
}
adm-stuck-dead-item = • {$queue}, job {$job}: {$error}
adm-btn-retry-update = ↻ Update {$update}
adm-btn-retry-job = ↻ Job {$queue}
adm-handed-back-update = Update {$update} is handed back: it will be handled again in a moment.
adm-not-waiting-update = Update {$update} is not parked any more (handed back already?): nothing changed.
adm-handed-back-job = The job of {$queue} is handed back for one more try.
adm-not-waiting-job = This job is not waiting any more (handed back already?): nothing changed.

adm-stars =
    ⭐ The bot's balance: {$balance} ⭐.
    Withdrawable (estimate): {$withdrawable} ⭐; {$held} ⭐ came in within the last {$days} days and is held by Telegram until then.
adm-stars-recent = The last {$count} transactions:
adm-stars-none = No transactions yet.
adm-stars-line = • {$date}: {$amount} ⭐, user {$user}, {$kind}
adm-stars-failed = Telegram did not answer with the balance: {$description}

alert-ticket = 🆘 New /paysupport ticket #{$ticket} from client {$user}: “{$reason}”. It has its own topic in the staff group.
alert-parked = ⚠️ Update {$update} ({$kind}) failed five times and is parked: {$error}. After the cause is fixed, hand it back with /stuck.
alert-dead-letter = ⚠️ A {$queue} job failed all its retries (job {$job}): {$error}. After the cause is fixed, hand it back with /stuck.
alert-mismatch = ⚠️ Reconciliation with Telegram: {$what}
