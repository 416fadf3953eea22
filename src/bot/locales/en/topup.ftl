# Top-ups inside a consultation (src/bot/features/topup.ts, src/orders/topups.ts, src/payments/topup.ts).

topup-offer = You can top up this consultation:
topup-button-questions = ➕ { $count ->
        [one] {$count} more question
       *[other] {$count} more questions
    } — {$price} ⭐
topup-button-hours = ➕ {$count} more h — {$price} ⭐
topup-title-questions = { $count ->
        [one] +{$count} question
       *[other] +{$count} questions
    }
topup-title-hours = +{$count} h
topup-invoice-questions = Top-up of your current consultation: { $count ->
        [one] {$count} more question
       *[other] {$count} more questions
    }, added at payment.
topup-invoice-hours = Top-up of your current consultation: its window is extended by {$count} h at payment.
topup-refused-unknown = This consultation cannot be topped up from this account.
topup-refused-not-active = This consultation is no longer active, so it cannot be topped up. See /tariffs for a new one.
topup-refused-gone = This top-up is no longer offered.
topup-refused-banned = Purchases are not available for this account.
precheckout-topup-ended = The consultation this top-up is for has ended; nothing was charged.
topup-done-questions = ✅ Payment received: {$amount} ⭐. { $count ->
        [one] {$count} more question was
       *[other] {$count} more questions were
    } added; questions left: {$left}.
topup-done-hours = ✅ Payment received: {$amount} ⭐. Your window is extended by {$count} h: it now ends at {$end}.
topup-late = ✅ We received {$amount} ⭐, but your consultation ended before the payment arrived, so nothing could be added. An administrator will refund it.
topup-actor = top-up by the client
admin-topup-late = ⚠️ Top-up payment {$payment}: {$amount} ⭐ from user {$user} (charge {$charge}) arrived after consultation #{$consultation} ended; nothing was granted. Refund it.
