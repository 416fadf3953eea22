# Top-ups inside a consultation (src/bot/features/topup.ts, src/orders/topups.ts, src/payments/topup.ts).

topup-offer = You can top up this consultation (a refunded top-up takes back what it added and you have not used yet: its questions not asked, its hours not passed):
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
    }, added at payment. If it is refunded, its questions not used yet are void.
topup-invoice-hours = Top-up of your current consultation: its window is extended by {$count} h at payment. If it is refunded, its hours not passed yet come off the end of the window.
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

# A refunded top-up (src/payments/topup-refund.ts): what it added, as far as unused, is taken back.
refund-done-topup = ↩️ {$amount} ⭐ for the top-up “{$title}” have been refunded to you.
refund-done-topup-questions-used = ↩️ {$amount} ⭐ for the top-up of { $count ->
        [one] {$count} question
       *[other] {$count} questions
    } have been refunded to you. You had already used { $count ->
        [one] it, so it stays
       *[other] them, so they stay
    } used. Questions left: {$left}.
refund-done-topup-questions-void = ↩️ {$amount} ⭐ for the top-up of { $count ->
        [one] {$count} question
       *[other] {$count} questions
    } have been refunded to you, and { $count ->
        [one] the question it added is
       *[other] the questions it added are
    } void. Questions left: {$left}.
refund-done-topup-questions-partly = ↩️ {$amount} ⭐ for the top-up of { $count ->
        [one] {$count} question
       *[other] {$count} questions
    } have been refunded to you. { $voided ->
        [one] The {$voided} question you had not used yet is
       *[other] The {$voided} questions you had not used yet are
    } void; the ones you used stay used. Questions left: {$left}.
refund-done-topup-hours = ↩️ {$amount} ⭐ for the top-up of {$count} h have been refunded to you. The part of those hours not passed yet comes off your window: it now ends at {$end}.
refund-done-topup-hours-passed = ↩️ {$amount} ⭐ for the top-up of {$count} h have been refunded to you. Those hours had already passed, so your window stays as it was (until {$end}).
topup-refunded-note-questions = ↩️ Top-up refunded (payment {$payment}, {$amount} ⭐): { $voided ->
        [0] its { $count ->
            [one] question was
           *[other] {$count} questions were
        } already used and stay used.
       *[other] {$voided} of its {$count} questions voided, unused.
    }
topup-refunded-note-hours = ↩️ Top-up refunded (payment {$payment}, {$amount} ⭐): its {$count} h come off the window as far as not passed; the window now ends {$end}.

# What an admin sees before refunding a consultation with top-ups (src/bot/features/admin-payments.ts).
refund-confirm-topups = Consultation #{$consultation} has { $count ->
        [one] a paid top-up
       *[other] {$count} paid top-ups
    } not refunded:
refund-confirm-topup-line = • payment {$payment}: {$amount} ⭐ — {$what}
refund-confirm-topup-rule = A top-up's refund takes back what it added as far as unused (questions not used, hours not passed).
refund-confirm-is-topup = This is a top-up of consultation #{$consultation} ({$what}). Its refund takes back what it added as far as unused (questions not used, hours not passed).
btn-refund-consultation-only = ↩️ Refund the consultation only ({$amount} ⭐)
btn-refund-with-topups = ↩️ Refund it with { $count ->
        [one] its top-up
       *[other] its {$count} top-ups
    } ({$amount} ⭐ in all)
refund-topups-later = Not included, paid after the list was shown: { $count ->
        [one] payment {$payments}
       *[other] payments {$payments}
    }. Refund separately if needed.
refund-topup-not-its = Payment {$payment} is not a top-up of this consultation; nothing was refunded.
refund-not-a-consultation = Payment {$payment} is not a consultation's payment; nothing was refunded.
