# /mine в личном чате с ботом (src/bot/features/mine.ts, src/experts/queue.ts): открытые вопросы сотрудника.

mine-title = 📋 { $count ->
        [one] Ваш {$count} открытый вопрос, по сроку:
        [few] Ваши {$count} открытых вопроса, по сроку:
       *[many] Ваши {$count} открытых вопросов, по сроку:
    }
mine-title-admin = 📋 { $count ->
        [one] {$count} открытый вопрос службы, по сроку:
        [few] {$count} открытых вопроса службы, по сроку:
       *[many] {$count} открытых вопросов службы, по сроку:
    }
mine-empty = 📋 Открытых вопросов у вас сейчас нет.
mine-empty-admin = 📋 Открытых вопросов в службе сейчас нет.
mine-question = консультация #{$consultation}, вопрос №{$number}
mine-line = ({$title}): {$when}
mine-left = осталось {$left} рабочего времени
mine-overdue = просрочен на {$over}
mine-owner = · {$name}
mine-owner-none = без ответственного
mine-more = …и ещё {$count}.
