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
dispute-card-payment = Платёж: {$amount} ⭐ · списание {$charge} · {$at} · { $kind ->
        [payment] оплата
        [overpayment] переплата
        [unmatched] без заказа
       *[other] {$kind}
    } · возврат: {$refunded}
dispute-card-no-payment = Платёж: клиент не выбрал («нет в списке»).
dispute-card-orders = Заказы:
dispute-card-order = • заказ {$order} · {$title} · {$price} ⭐ · { $state ->
        [created] ждёт оплаты
        [reserved] ждёт оплаты
        [paid_waiting] оплачен, ждёт старта
        [active] идёт
        [closed] завершён
        [refunded] возврат
        [cancelled] отменён
       *[other] {$state}
    } · консультация: { $consultation ->
        [waiting] ждёт старта
        [active] идёт
        [closed] завершена
        [revoked] возврат
       *[other] нет
    }, до {$until}
dispute-card-promised = Клиенту обещан ответ до {$by}.
dispute-card-help = Сообщения здесь копируются клиенту; сообщения, начинающиеся с {$prefix}, остаются в теме.
dispute-client-added = Клиент дополняет: {$text}
dispute-topic-resolved = Обращение № {$ticket}: { $state ->
        [open] открыто
        [refunded] деньги возвращены
        [declined] в запросе отказано
        [closed] закрыто
       *[other] {$state}
    }, кто: {$by}. {$resolution}
dispute-refund-confirm = Вернуть полностью платёж по обращению № {$ticket}? Отменить это нельзя.
dispute-refund-no-payment = К обращению № {$ticket} не привязан платёж. Если нашли его — /refund <номер списания>.
dispute-not-open = Обращение № {$ticket} уже не открыто ({ $state ->
        [open] открыто
        [refunded] деньги возвращены
        [declined] в запросе отказано
        [closed] закрыто
       *[other] {$state}
    }); ничего не изменено.
dispute-unknown = Обращения № {$ticket} у нас нет.
dispute-decline-ask = Обращение № {$ticket}: напишите причину отказа следующим сообщением в этой теме. Клиент её получит.

btn-refund = ↩️ Возврат
btn-refund-yes = Да, вернуть
btn-refund-payment = ↩️ Вернуть платёж {$payment}
btn-decline = ✖️ Отказать
btn-close = ✔️ Закрыть
btn-cancel = Отмена
admin-only = Это могут делать только администраторы.

refund-confirm = Вернуть платёж {$payment} ({ $kind ->
        [payment] оплата
        [overpayment] переплата
        [unmatched] без заказа
       *[other] {$kind}
    }): {$amount} ⭐ пользователю {$user}, списание {$charge}? Отменить это нельзя.
refund-ok = ✅ Возврат выполнен: платёж {$payment}, {$amount} ⭐ пользователю {$user} (списание {$charge}).
refund-ok-already-at-telegram = ✅ Telegram сообщает, что списание {$charge} уже возвращён; платёж {$payment} отмечен как возвращённый ({$amount} ⭐, пользователь {$user}).
refund-already = Платёж {$payment} (списание {$charge}) уже возвращён; ничего не сделано.
refund-in-progress = Возврат платежа {$payment} уже выполняется; подождите минуту и проверьте /refunds.
refund-unknown = Такого платежа у нас нет; ничего не сделано.
refund-unknown-id = Платежа {$payment} у нас нет; ничего не сделано.
refund-unknown-charge = Платежа с номером списания «{$charge}» у нас нет; ничего не сделано.
refund-failed = ❌ Возврат платежа {$payment} (списание {$charge}) не выполнен; ничего не изменено. Ответ Telegram: {$description}
refund-cancelled = Возврат отменён.
refund-usage = Использование: /refund <номер списания в Telegram> или /refund #<id платежа>.
queue-empty = Ничего не ждёт возврата или даты старта.
queue-title = Ждут администратора:
queue-payment = • платёж {$payment} · { $kind ->
        [payment] оплата
        [overpayment] переплата
        [unmatched] без заказа
       *[other] {$kind}
    } · {$amount} ⭐ · пользователь {$user} · заказ {$order} · списание {$charge}
queue-waiting = • заказ {$order} · {$title} · {$amount} ⭐ · пользователь {$user}: оплачен после истечения удержания, нужна дата старта или возврат (платёж {$payment})

admin-pay-unmatched = ⚠️ Платёж {$payment}: {$amount} ⭐ от пользователя {$user} (списание {$charge}) не относится ни к одному нашему заказу (заказ {$order}). Записан как несопоставленный; верните или разберитесь.
admin-overpayment = ⚠️ Переплата {$payment}: заказ {$order} («{$title}») уже был оплачен; пользователь {$user} заплатил {$amount} ⭐ повторно (списание {$charge}). Нужен возврат.
admin-pay-late = ⚠️ Поздняя оплата {$payment}: заказ {$order} («{$title}»), пользователь {$user}, {$amount} ⭐ — удержание истекло, старт заполнен. Клиенту предложены ближайшие свободные старты или возврат.
admin-pay-mismatch = ⚠️ Платёж {$payment} по заказу {$order}: {$amount} {$currency} не совпадает с ценой {$price} ⭐. Принят; проверьте.
admin-refunded = ↩️ Платёж {$payment} возвращён: {$amount} ⭐ пользователю {$user} (списание {$charge}), кто: {$by} ({ $source ->
        [telegram] по сообщению Telegram
        [admin] администратор
        [client] по просьбе клиента
        [dispute] по обращению
       *[other] {$source}
    }).
admin-refund-unknown-charge = ⚠️ Telegram сообщает о возврате списания {$charge} ({$amount} ⭐, пользователь {$user}), которого нет в наших платежах.
admin-start-period-ended = ⚠️ Заказ {$order} («{$title}», пользователь {$user}): клиент не начал в отведённый срок. Ему предложены дата старта или возврат.

reconcile-started = Сверка с Telegram запущена; отчёт придёт сюда.
reconcile-clean = ✅ Сверка: платежей в Telegram {$tg}, у нас {$db}, расхождений нет.
reconcile-mismatches =
    ⚠️ Сверка: расхождений {$count} (платежей в Telegram {$tg}, у нас {$db}):
    {$list}
    (и ещё {$more})
reconcile-missing-in-db = • списание {$charge}: оплачен в Telegram ({$tg} ⭐, пользователь {$user}), нет в наших платежах
reconcile-missing-at-telegram = • списание {$charge}: есть у нас ({$db} ⭐, пользователь {$user}), нет в Telegram
reconcile-amount-differs = • списание {$charge}: в Telegram {$tg} ⭐, у нас {$db} ⭐
reconcile-refund-missing-in-db = • списание {$charge}: возвращён в Telegram, у нас не отмечен
reconcile-refund-missing-at-telegram = • списание {$charge}: у нас отмечен возврат, в Telegram возврата нет
