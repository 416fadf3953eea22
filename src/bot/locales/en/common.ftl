welcome =
    Hello, {$name}! This is {$desk}.
    Here you can buy a consultation with an expert for Telegram Stars and ask your questions within the paid window.
welcome-tariffs = What you can buy:
tariff-line = • {$title} — {$price} ⭐
help =
    /start — about the desk and tariffs
    /tariffs — tariffs and what they include
    /status — your orders and consultations
    /timezone — the time zone your times are shown in
    /transcript — the transcript of a finished consultation
    /terms — terms of service
    /privacy — privacy policy
    /paysupport — a problem with a payment
    /cancel — stop what you started (e.g. a /paysupport request)
cmd-start = About the desk
cmd-tariffs = Tariffs
cmd-status = My consultations
cmd-help = Help
cmd-transcript = Transcript of a consultation
cmd-terms = Terms
cmd-privacy = Privacy
cmd-paysupport = Payment support
cmd-timezone = Time zone
cmd-cancel = Cancel what you started
