# Докупка внутри консультации (src/bot/features/topup.ts, src/orders/topups.ts, src/payments/topup.ts).

topup-offer = Консультацию можно дополнить (если дополнение вернут, отменяется то, чем вы ещё не воспользовались: не заданные вопросы, не прошедшие часы):
topup-button-questions = ➕ ещё { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    } — {$price} ⭐
topup-button-hours = ➕ ещё {$count} ч — {$price} ⭐
topup-title-questions = { $count ->
        [one] +{$count} вопрос
        [few] +{$count} вопроса
       *[many] +{$count} вопросов
    }
topup-title-hours = +{$count} ч
topup-invoice-questions = Дополнение к текущей консультации: ещё { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    }, добавляются при оплате. При возврате не использованные вопросы отменяются.
topup-invoice-hours = Дополнение к текущей консультации: окно продлевается на {$count} ч при оплате. При возврате не прошедшие часы снимаются с конца окна.
topup-refused-unknown = Эту консультацию нельзя дополнить с этого аккаунта.
topup-refused-not-active = Консультация уже не активна, дополнить её нельзя. Новая — в /tariffs.
topup-refused-gone = Это дополнение больше не предлагается.
topup-refused-banned = Покупки для этого аккаунта недоступны.
precheckout-topup-ended = Консультация, к которой относится дополнение, уже закончилась; ничего не списано.
topup-done-questions = ✅ Оплата получена: {$amount} ⭐. Добавлено { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    }; осталось вопросов: {$left}.
topup-done-hours = ✅ Оплата получена: {$amount} ⭐. Окно продлено на {$count} ч: теперь оно закрывается {$end}.
topup-late = ✅ Мы получили {$amount} ⭐, но консультация закончилась раньше, чем пришла оплата, поэтому ничего не добавлено. Администратор вернёт оплату.
topup-actor = докупка клиентом
admin-topup-late = ⚠️ Оплата дополнения {$payment}: {$amount} ⭐ от пользователя {$user} (списание {$charge}) пришла после окончания консультации #{$consultation}; ничего не выдано. Верните оплату.

# Возврат дополнения (src/payments/topup-refund.ts): отменяется то, чем ещё не воспользовались.
refund-done-topup = ↩️ Вам вернули {$amount} ⭐ за дополнение «{$title}».
refund-done-topup-questions-used = ↩️ Вам вернули {$amount} ⭐ за дополнение на { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    }. Вы уже воспользовались { $count ->
        [one] им, он остаётся
       *[other] ими, они остаются
    } за вами. Осталось вопросов: {$left}.
refund-done-topup-questions-void = ↩️ Вам вернули {$amount} ⭐ за дополнение на { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    }, и { $count ->
        [one] добавленный вопрос отменён
       *[other] добавленные вопросы отменены
    }. Осталось вопросов: {$left}.
refund-done-topup-questions-partly = ↩️ Вам вернули {$amount} ⭐ за дополнение на { $count ->
        [one] {$count} вопрос
        [few] {$count} вопроса
       *[many] {$count} вопросов
    }. { $voided ->
        [one] {$voided} ещё не использованный вопрос отменён
        [few] {$voided} ещё не использованных вопроса отменены
       *[many] {$voided} ещё не использованных вопросов отменены
    }; использованные остаются за вами. Осталось вопросов: {$left}.
refund-done-topup-hours = ↩️ Вам вернули {$amount} ⭐ за дополнение на {$count} ч. Ещё не прошедшая часть этих часов снята с окна: теперь оно закрывается {$end}.
refund-done-topup-hours-passed = ↩️ Вам вернули {$amount} ⭐ за дополнение на {$count} ч. Эти часы уже прошли, поэтому окно не меняется (до {$end}).
topup-refunded-note-questions = ↩️ Дополнение возвращено (платёж {$payment}, {$amount} ⭐): { $voided ->
        [0] { $count ->
            [one] его вопрос уже использован и остаётся
           *[other] все его вопросы ({$count}) уже использованы и остаются
        } за клиентом.
       *[other] отменено не использованных вопросов: {$voided} из {$count}.
    }
topup-refunded-note-hours = ↩️ Дополнение возвращено (платёж {$payment}, {$amount} ⭐): его {$count} ч сняты с окна, насколько ещё не прошли; теперь окно закрывается {$end}.

# Что видит администратор перед возвратом консультации с дополнениями (src/bot/features/admin-payments.ts).
refund-confirm-topups = У консультации #{$consultation} { $count ->
        [one] {$count} оплаченное дополнение
        [few] {$count} оплаченных дополнения
       *[many] {$count} оплаченных дополнений
    } без возврата:
refund-confirm-topup-line = • платёж {$payment}: {$amount} ⭐ — {$what}
refund-confirm-topup-rule = Возврат дополнения отменяет то, что оно добавило, насколько это не использовано (не заданные вопросы, не прошедшие часы).
refund-confirm-is-topup = Это дополнение к консультации #{$consultation} ({$what}). Его возврат отменяет то, что оно добавило, насколько это не использовано (не заданные вопросы, не прошедшие часы).
btn-refund-consultation-only = ↩️ Вернуть только консультацию ({$amount} ⭐)
btn-refund-with-topups = ↩️ Вернуть вместе { $count ->
        [one] с дополнением
       *[other] с {$count} дополнениями
    } ({$amount} ⭐ всего)
refund-topups-later = Не вошли (оплачены после показа списка): { $count ->
        [one] платёж {$payments}
       *[other] платежи {$payments}
    }. Верните их отдельно, если нужно.
refund-topup-not-its = Платёж {$payment} не дополнение этой консультации; ничего не возвращено.
refund-not-a-consultation = Платёж {$payment} не оплата консультации; ничего не возвращено.
