# Докупка внутри консультации (src/bot/features/topup.ts, src/orders/topups.ts, src/payments/topup.ts).

topup-offer = Консультацию можно дополнить:
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
    }, добавляются при оплате.
topup-invoice-hours = Дополнение к текущей консультации: окно продлевается на {$count} ч при оплате.
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
admin-topup-late = ⚠️ Оплата дополнения {$payment}: {$amount} ⭐ от пользователя {$user} (charge {$charge}) пришла после окончания консультации #{$consultation}; ничего не выдано. Верните оплату.
