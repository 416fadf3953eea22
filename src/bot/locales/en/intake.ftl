# The durable intake (src/intake): an update that failed again and again is parked for a person; the user and the
# staff are told once.

intake-parked = We could not process your last message or button press, and our team has been told. Nothing else is needed from you; if it was a question, you may send it again later.
intake-parked-payment = Telegram has your payment, but we could not record it automatically. Our team has been told and will activate your consultation or refund you; nothing is lost. /paysupport reaches us if you want to ask.
intake-parked-staff =
    ⚠️ An update could not be processed after several attempts and is set aside for a person to look at.
    Update {$update} from user {$user}; Telegram charge {$charge}.
    Error: {$error}
