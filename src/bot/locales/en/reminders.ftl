# Reminders before a start (src/lifecycle/start-reminders.ts; issue 22).

start-reminder-start =
    ⏰ Your consultation “{$title}” starts {$at}, in {$left}.
    From then you can write your questions here.
start-reminder-deadline =
    ⏳ Your consultation “{$title}” has not started yet. Press “Start” by {$at} (in {$left}) to begin it; after that you will be offered the next free start or a refund.
start-reminder-desk-opens = The desk is closed now: Start works while it is open, next from {$at}.
start-reminder-hours = { $n ->
    [one] {$n} hour
   *[other] {$n} hours
}
start-reminder-minutes = { $n ->
    [one] {$n} minute
   *[other] {$n} minutes
}
