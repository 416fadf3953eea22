# /mine in private chat with the bot (src/bot/features/mine.ts, src/experts/queue.ts): a staff member's open questions.

mine-title = 📋 { $count ->
        [one] Your open question, by due time:
       *[other] Your {$count} open questions, by due time:
    }
mine-title-admin = 📋 { $count ->
        [one] The desk's open question, by due time:
       *[other] The desk's {$count} open questions, by due time:
    }
mine-empty = 📋 You have no open questions now.
mine-empty-admin = 📋 The desk has no open questions now.
mine-question = consultation #{$consultation}, question #{$number}
mine-line = ({$title}): {$when}
mine-left = {$left} of working time left
mine-overdue = overdue by {$over}
mine-owner = · {$name}
mine-owner-none = no owner
mine-more = { $count ->
        [one] …and one more.
       *[other] …and {$count} more.
    }
