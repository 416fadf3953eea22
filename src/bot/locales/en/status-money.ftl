# /status: payments with their refunds, a plan's periods (src/bot/features/status.ts).
status-payments-title = { $own ->
        [yes] 💳 Your payments:
       *[no] 💳 Your payments ({$zone}):
    }
status-payment = • {$at}: {$amount} ⭐ for {$what}
status-payment-over = • {$at}: {$amount} ⭐, a second payment for {$what} (to be refunded)
status-payment-refunded = {"  "}↩️ {$amount} ⭐ refunded to you on {$at}
status-payment-for-consultation = the consultation “{$title}”
status-payment-for-topup = a top-up: {$title}
status-payment-for-subscription = the plan “{$title}”
status-payment-for-subscription_upgrade = a change of plan: “{$title}”
status-payment-for-unknown = no order of ours (our support will sort it out)
status-periods-title = 📅 Your support plan, period by period:
status-period-current = • Period {$number} ({$title}): {$start} — {$end}, now; {$questions} { $questions ->
        [one] question
       *[other] questions
    }{ $carried ->
        [0] {""}
       *[other] , {$carried} of them carried over
    }
status-period-past = • Period {$number} ({$title}): {$start} — {$end}; {$questions} { $questions ->
        [one] question
       *[other] questions
    }{ $carried ->
        [0] {""}
       *[other] , {$carried} of them carried over
    }
