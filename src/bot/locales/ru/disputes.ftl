# /paysupport, разбор споров и инструменты администратора (paysupport.ts, admin-payments.ts, disputes/*, payments/*).

ps-ask-payment = О каком платеже речь? (Ваши последние платежи по дате и тарифу.)
ps-no-payments = Мы не видим ваших платежей. Если вы платили, а платежа здесь нет, выберите «Нет в списке» и опишите, что произошло.
ps-payment-button = {$date} · {$title} · {$amount} ⭐
ps-payment-button-refunded = {$date} · {$title} · {$amount} ⭐ (возвращён)
ps-other = Нет в списке / другая проблема
ps-cancel = Отмена
ps-ask-reason = Опишите проблему одним сообщением, ответом на это сообщение (что произошло и чего вы ждёте). Пока консультация открыта, сообщения не ответом уходят эксперту как обычно. Отменить: «Отмена» выше или /cancel.
ps-reason-placeholder = Что произошло и чего вы ждёте
ps-pick-button = Выберите, пожалуйста, одну из кнопок выше.
ps-cancelled = Отменено. Написать в /paysupport можно в любой момент.
ps-too-short = Опишите проблему хотя бы в нескольких словах.
ps-payment-unknown = Этот платёж не найден. Начните заново: /paysupport.

dispute-opened = 🧾 Ваше обращение № {$ticket} открыто. Администратор ответит здесь до {$by}. Повторно писать не нужно; чтобы дополнить, используйте /paysupport.
dispute-appended = 🧾 Добавлено к обращению № {$ticket}. Администратор ответит здесь до {$by}.
dispute-declined = 🧾 Обращение № {$ticket}: в запросе отказано. Причина: {$reason}
dispute-closed = 🧾 Обращение № {$ticket} закрыто. Если что-то всё ещё не так, напишите в /paysupport снова.
dispute-reason-refund-request = Запрошен возврат по заказу {$order} («{$title}»): оплата пришла после того, как удержание места истекло.

dispute-topic-name = 🧾 #{$ticket} · {$name} · paysupport
dispute-card-title = 🧾 Обращение № {$ticket} (/paysupport)
dispute-card-client = Клиент: {$name} {$username} · id {$id} · язык {$lang}
dispute-card-reason = Причина: {$reason}
dispute-card-payment = Платёж: {$amount} ⭐ · charge {$charge} · {$at} · {$kind} · возврат: {$refunded}
dispute-card-no-payment = Платёж: клиент не выбрал («нет в списке»).
dispute-card-orders = Заказы:
dispute-card-order = • заказ {$order} · {$title} · {$price} ⭐ · {$state} · консультация: {$consultation}, до {$until}
dispute-card-promised = Клиенту обещан ответ до {$by}.
dispute-card-help = Сообщения здесь копируются клиенту; сообщения, начинающиеся с {$prefix}, остаются в топике.
dispute-client-added = Клиент дополняет: {$text}
dispute-topic-resolved = Обращение № {$ticket}: {$state}, кто: {$by}. {$resolution}
dispute-refund-confirm = Вернуть полностью платёж по обращению № {$ticket}? Отменить это нельзя.
dispute-refund-no-payment = К обращению № {$ticket} не привязан платёж. Если нашли его — /refund <charge id>.
dispute-not-open = Обращение № {$ticket} в состоянии {$state}; ничего не изменено.
dispute-unknown = Обращения № {$ticket} на этом столе нет.
dispute-decline-ask = Обращение № {$ticket}: напишите причину отказа следующим сообщением в этом топике. Клиент её получит.

btn-refund = ↩️ Возврат
btn-refund-yes = Да, вернуть
btn-refund-payment = ↩️ Вернуть платёж {$payment}
btn-decline = ✖️ Отказать
btn-close = ✔️ Закрыть
btn-cancel = Отмена
admin-only = Это могут делать только администраторы стола.

refund-confirm = Вернуть платёж {$payment} ({$kind}): {$amount} ⭐ пользователю {$user}, charge {$charge}? Отменить это нельзя.
refund-ok = ✅ Возврат выполнен: платёж {$payment}, {$amount} ⭐ пользователю {$user} (charge {$charge}).
refund-ok-already-at-telegram = ✅ Telegram сообщает, что charge {$charge} уже возвращён; платёж {$payment} отмечен как возвращённый ({$amount} ⭐, пользователь {$user}).
refund-already = Платёж {$payment} (charge {$charge}) уже возвращён; ничего не сделано.
refund-in-progress = Возврат платежа {$payment} уже выполняется; подождите минуту и проверьте /refunds.
refund-unknown = Такого платежа на этом столе нет; ничего не сделано.
refund-unknown-id = Платежа {$payment} на этом столе нет; ничего не сделано.
refund-unknown-charge = Платежа с charge id «{$charge}» на этом столе нет; ничего не сделано.
refund-failed = ❌ Возврат платежа {$payment} (charge {$charge}) не выполнен; ничего не изменено. Ответ Telegram: {$description}
refund-cancelled = Возврат отменён.
refund-usage = Использование: /refund <telegram charge id> или /refund #<id платежа>.
queue-empty = Ничего не ждёт возврата или даты старта.
queue-title = Ждут администратора:
queue-payment = • платёж {$payment} · {$kind} · {$amount} ⭐ · пользователь {$user} · заказ {$order} · charge {$charge}
queue-waiting = • заказ {$order} · {$title} · {$amount} ⭐ · пользователь {$user}: оплачен после истечения удержания, нужна дата старта или возврат (платёж {$payment})

admin-pay-unmatched = ⚠️ Платёж {$payment}: {$amount} ⭐ от пользователя {$user} (charge {$charge}) не относится ни к одному заказу стола (заказ {$order}). Записан как несопоставленный; верните или разберитесь.
admin-overpayment = ⚠️ Переплата {$payment}: заказ {$order} («{$title}») уже был оплачен; пользователь {$user} заплатил {$amount} ⭐ повторно (charge {$charge}). Нужен возврат.
admin-pay-late = ⚠️ Поздняя оплата {$payment}: заказ {$order} («{$title}»), пользователь {$user}, {$amount} ⭐ — удержание истекло, старт заполнен. Клиенту предложены ближайшие свободные старты или возврат.
admin-pay-mismatch = ⚠️ Платёж {$payment} по заказу {$order}: {$amount} {$currency} не совпадает с ценой {$price} ⭐. Принят; проверьте.
admin-refunded = ↩️ Платёж {$payment} возвращён: {$amount} ⭐ пользователю {$user} (charge {$charge}), кто: {$by} ({$source}).
admin-refund-unknown-charge = ⚠️ Telegram сообщает о возврате charge {$charge} ({$amount} ⭐, пользователь {$user}), которого нет в наших платежах.
admin-start-period-ended = ⚠️ Заказ {$order} («{$title}», пользователь {$user}): клиент не начал в отведённый срок. Ему предложены дата старта или возврат.

reconcile-started = Сверка с Telegram запущена; отчёт придёт сюда.
reconcile-clean = ✅ Сверка: платежей в Telegram {$tg}, у нас {$db}, расхождений нет.
reconcile-mismatches =
    ⚠️ Сверка: расхождений {$count} (платежей в Telegram {$tg}, у нас {$db}):
    {$list}
    (и ещё {$more})
reconcile-missing-in-db = • charge {$charge}: оплачен в Telegram ({$tg} ⭐, пользователь {$user}), нет в наших платежах
reconcile-missing-at-telegram = • charge {$charge}: есть у нас ({$db} ⭐, пользователь {$user}), нет в Telegram
reconcile-amount-differs = • charge {$charge}: в Telegram {$tg} ⭐, у нас {$db} ⭐
reconcile-refund-missing-in-db = • charge {$charge}: возвращён в Telegram, у нас не отмечен
reconcile-refund-missing-at-telegram = • charge {$charge}: у нас отмечен возврат, в Telegram возврата нет
