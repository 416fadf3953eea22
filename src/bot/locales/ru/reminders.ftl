# Напоминания перед началом (src/lifecycle/start-reminders.ts; issue 22).

start-reminder-start =
    ⏰ Ваша консультация «{$title}» начнётся {$at}, через {$left}.
    С этого момента можно писать вопросы здесь.
start-reminder-deadline =
    ⏳ Ваша консультация «{$title}» ещё не началась. Нажмите «Начать» до {$at}: через {$left} начать будет уже нельзя, и вам предложат ближайший свободный старт или возврат.
start-reminder-desk-opens = Сейчас мы не работаем: «Начать» действует в рабочее время, ближайшее — с {$at}.
start-reminder-hours = { $n ->
    [one] {$n} час
    [few] {$n} часа
   *[many] {$n} часов
}
start-reminder-minutes = { $n ->
    [one] {$n} минуту
    [few] {$n} минуты
   *[many] {$n} минут
}
