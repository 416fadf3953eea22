# /status: платежи с возвратами, периоды плана (src/bot/features/status.ts).
status-payments-title = { $own ->
        [yes] 💳 Ваши платежи:
       *[no] 💳 Ваши платежи (время {$zone}):
    }
status-payment = • {$at}: {$amount} ⭐ за {$what}
status-payment-over = • {$at}: {$amount} ⭐ — повторная оплата за {$what} (будет возвращена)
status-payment-refunded = {"  "}↩️ {$amount} ⭐ возвращены вам {$at}
status-payment-for-consultation = консультацию «{$title}»
status-payment-for-topup = дополнение: {$title}
status-payment-for-subscription = план «{$title}»
status-payment-for-subscription_upgrade = смену плана на «{$title}»
status-payment-for-unknown = неизвестный нам заказ (поддержка разберётся)
status-periods-title = 📅 Ваш план поддержки по периодам:
status-period-current = • Период {$number} ({$title}): {$start} — {$end}, идёт сейчас; { $questions ->
        [one] {$questions} вопрос
        [few] {$questions} вопроса
       *[many] {$questions} вопросов
    }{ $carried ->
        [0] {""}
       *[other] , из них перенесено: {$carried}
    }
status-period-past = • Период {$number} ({$title}): {$start} — {$end}; { $questions ->
        [one] {$questions} вопрос
        [few] {$questions} вопроса
       *[many] {$questions} вопросов
    }{ $carried ->
        [0] {""}
       *[other] , из них перенесено: {$carried}
    }
