# Оценки завершённой консультации (src/bot/features/rating.ts, src/consultations/ratings.ts).

rating-ask = Как прошла консультация? Оцените от 1 до 5:
rating-button = { $score ->
        [1] 😞 1
        [2] 🙁 2
        [3] 😐 3
        [4] 🙂 4
       *[5] 😍 5
    }
rating-saved-short = Оценка: {$score} из 5.
rating-thanks = Спасибо! Ваша оценка консультации: {$score} из 5. В течение { $days ->
        [one] {$days} дня
       *[other] {$days} дней
    } её можно изменить, нажав другую оценку, и добавить комментарий.
rating-changed = Теперь ваша оценка: {$score} из 5.
rating-comment-button = ✍️ Добавить комментарий
rating-comment-ask = ✍️ Напишите комментарий одним сообщением, ответом на это сообщение. Пока консультация открыта, сообщения не ответом уходят эксперту как обычно. Передумали? Нажмите «Отмена» выше или отправьте /cancel.
rating-comment-cancel = Отмена
rating-comment-placeholder = Ваш комментарий о консультации
rating-comment-saved = Спасибо, комментарий сохранён.
rating-comment-cancelled = Комментарий не добавлен.
rating-too-late = Оценку можно изменить только в течение { $days ->
        [one] {$days} дня
       *[other] {$days} дней
    }; эта остаётся прежней.
rating-unknown = Эту консультацию нельзя оценить с этого аккаунта.
rating-not-closed = Оценить консультацию можно после её окончания.

## Сотрудникам (на языке по умолчанию)

rating-low-admins = 👎 Низкая оценка {$score}/5: консультация #{$consultation} ({$title}, клиент id {$user}), ответственный {$expert}.
rating-low-owner = 👎 Клиент оценил вашу консультацию #{$consultation} ({$title}) на {$score}/5. Администраторам тоже сообщено.
rating-low-comment = 💬 Комментарий к оценке {$score}/5 консультации #{$consultation}: {$comment}
report-ratings-title = ⭐ Оценки консультаций (средняя, количество) по ответственному эксперту (а без него — по тому, кто ответил больше всех):
report-rating-line = • {$who}: {$average} по { $count ->
        [one] {$count} оценке
       *[other] {$count} оценкам
    }
report-who-nobody = нет ответственного, никто не отвечал
