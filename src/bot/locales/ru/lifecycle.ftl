# SLA-задачи, жизненный цикл окна, дополнения /status и расшифровки (src/lifecycle, src/bot/features/transcript.ts).
# Тексты клиенту — на языке клиента; тексты сотрудникам (sla-reminder, sla-breach-topic, sla-breach-admins,
# sla-refund-flag, sla-policy-*, lifecycle-topic-*) — на языке команды.

## SLA: сотрудникам

sla-reminder = ⏰ Ответ на вопрос №{$number} нужен до {$due}: осталось {$left} рабочего времени.
sla-expert-mention = { $n ->
        [0] эксперт
       *[other] эксперт {$n}
    }
sla-breach-topic = 🔴 Ответ на вопрос №{$number} нужен был до {$due}, но его нет. Политика нарушения: {$policy}.
sla-breach-admins =
    🔴 Нарушен SLA: консультация #{$consultation} ({$title}, клиент id {$user}), вопрос №{$number}.
    Принят {$accepted}, срок {$due}.
    Политика нарушения: {$policy}.
sla-client-blocked = ⚠️ Клиент заблокировал бота: сообщения ему отмечаются как недоставленные. Ничего не приостановлено.
sla-policy-none = нет (тариф не предусматривает компенсации)
sla-policy-extended = окно продлено на {$hours} ч (теперь до {$end})
sla-policy-extra-appeal = выдан один дополнительный вопрос (осталось {$left})
sla-policy-skipped-window = не применена: окно уже закончилось
sla-policy-skipped-refunded = не применена: консультация возвращена
sla-refund-flag =
    ⚖️ Консультация #{$consultation} ({$title}, клиент id {$user}): вопрос №{$number}, принятый {$accepted} со сроком {$due}, остался без ответа к концу консультации.
    Примите решение о возврате (оплачено {$amount} ⭐).

## SLA: клиенту

sla-breach-client-none = ⏰ Простите: ответ на ваш вопрос №{$number} нужен был до {$due} и задерживается. Эксперт ответит как можно скорее.
sla-breach-client-extended = ⏰ Простите: ответ на ваш вопрос №{$number} нужен был до {$due} и задерживается. По условиям тарифа ваше окно продлено на {$hours} ч: теперь оно открыто до {$end}.
sla-breach-client-extra-appeal = ⏰ Простите: ответ на ваш вопрос №{$number} нужен был до {$due} и задерживается. По условиям тарифа вам добавлен ещё один вопрос: в этой консультации осталось {$left}.
sla-breach-client-after-window = ⏰ Простите: ответ на ваш вопрос №{$number} нужен был до {$due} и задерживается. Мы сообщили об этом администраторам, они решат вопрос о компенсации; ответ всё равно придёт сюда.

## Окно

lifecycle-closing-soon =
    ⏳ Консультация «{$title}» скоро закончится: осталось {$left}, до {$end}.
    Осталось вопросов: {$appealsLeft} из {$appealsTotal}.
lifecycle-closing-soon-open = Ваш вопрос ждёт ответа эксперта; ответ придёт и после окончания окна.
lifecycle-closed =
    🔚 Консультация «{$title}» закончилась {$end}. Для новых вопросов нужна новая консультация (/tariffs).
    Расшифровку переписки можно получить кнопкой ниже или командой /transcript.
lifecycle-closed-open = На уже принятый вопрос вы всё равно получите ответ здесь.
lifecycle-topic-closed = 🔚 Окно закончилось {$end}. На все вопросы ответ дан: тема будет закрыта.
lifecycle-topic-closed-open = 🔚 Окно закончилось {$end}. Ещё нужно ответить: {$open}. Тема закроется, когда ответы будут даны.

## /status

status-time-left = ⏱ Осталось времени: {$left}.
status-time-over = ⏱ Окно закончилось.
status-appeals = ❓ Вопросы: отвечено {$used}, ждут ответа {$held}, осталось {$left} из {$total}.
status-open-appeal = • Вопрос №{$number} (принят {$accepted}): ответ до {$due}.
status-open-appeal-late = • Вопрос №{$number} (принят {$accepted}): ответ нужен был до {$due} и задерживается.

## Расшифровка

transcript-button = 📄 Получить расшифровку
transcript-button-order = 📄 Расшифровка заказа {$order}
transcript-queued = Готовим расшифровку: файл придёт через мгновение.
transcript-none = У вас ещё нет завершённой консультации, расшифровки нет.
transcript-not-closed = Расшифровка будет доступна, когда консультация закончится. Окно показывает /status.
transcript-caption = Расшифровка консультации #{$id}
transcript-title = Консультация #{$id} · {$title} · {$desk}
transcript-window = Окно: {$start} — {$end}
transcript-appeal = — Вопрос №{$number} · принят {$accepted} · срок {$due} · ответ {$answered}
transcript-not-answered = ещё нет
transcript-you = Вы
transcript-expert = Эксперт
transcript-bot = Бот
transcript-refused = (не передано эксперту: { $reason ->
        [window_closed] окно уже закончилось
        [closed] консультация уже завершилась
        [no_appeals] вопросы закончились
        [refunded] консультация возвращена
       *[other] отказ
    })
transcript-failed = (не удалось передать эксперту)
transcript-empty = (сообщений нет)
transcript-footer = Конец расшифровки. Консультация завершилась {$at}.
