# Several consultations at once (src/consultations/several.ts, choice.ts, client-topic.ts; src/bot/features/several.ts).

cmd-switch = Choose where your messages go
several-choice-button = {$title} (bought {$bought})
several-choose =
    You have {$count} consultations running. Which one is this message for? It is kept and sent where you choose, and your next messages go there too.
    To write to another one later, reply to one of its messages (its receipt or an answer) or use /switch.
several-switch =
    Where should your messages go? Choose a consultation.
    A reply to one of a consultation's messages always goes to that consultation.
several-switch-none = You have no consultation running right now.
several-switch-one = You have one consultation running, {$title} (bought {$bought}): all your messages go there.
several-chosen = Your messages now go to “{$title}” (bought {$bought}). To write to another consultation, reply to one of its messages or use /switch.
several-chosen-released =
    Your messages now go to “{$title}” (bought {$bought}). To write to another consultation, reply to one of its messages or use /switch.
    { $count ->
        [one] The message that was waiting has been sent there.
       *[other] The {$count} messages that were waiting have been sent there.
    }
several-chosen-short = Sending to: {$title}
several-chosen-gone = That consultation is no longer running. Choose another one, or see /status.
several-here-button = Send my next messages here
several-receipt-for = Consultation: “{$title}” (bought {$bought}).
several-topic-name = {$title} · {$bought}
several-topic-welcome = This topic is your consultation “{$title}”. Write your questions here: they go to its expert, and the answers come here.
several-offer-running =
    ⚠️ You already have { $count ->
        [one] a consultation
       *[other] consultations
    } running: {$list}. This purchase is a separate consultation with its own questions and time.
    A message that replies to a consultation's message goes to that one; for the others you choose once (/switch changes it).
several-offer-item = “{$title}” (bought {$bought})
several-held-delivered =
    { $count ->
        [one] Your message that was waiting for a choice has
       *[other] Your {$count} messages that were waiting for a choice have
    } been sent to “{$title}” (bought {$bought}): it is the only consultation you still have running.
several-held-dropped =
    { $count ->
        [one] Your message that was waiting for a choice was
       *[other] Your {$count} messages that were waiting for a choice were
    } not sent to an expert: none of your consultations is running any more. To ask again, buy a new consultation.
