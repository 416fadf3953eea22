# Эксперты (src/experts): владельцы, передача, доступность, личные уведомления, заготовки. Тексты сотрудникам, на
# языке команды.

desk-card-owner = 🧑‍💼 Ведёт: {$owner}
desk-card-unassigned = не назначен
experts-owner-assigned = 🧑‍💼 Консультация #{$id} ({$title}) ваша, {$name}. О новых вопросах бот напишет сюда.
experts-owner-handed = 🧑‍💼 {$by} передал(а) вам консультацию #{$id} ({$title}).
experts-handover-note = 🔁 Ведущий: {$from} → {$to} (передал(а) {$by}).
experts-assign-pick = Кому передать консультацию? Сейчас ведёт: {$owner}.
experts-assign-done = Передано: {$name}.
experts-assign-already = Уже ведёт эту консультацию.
experts-assign-not-staff = Консультации ведут только сотрудники.
experts-assign-other-group = Этого сотрудника нет среди экспертов этой группы: отвечать здесь он не сможет. Выберите кого-то из этой группы.
experts-assign-unknown = Консультация не найдена.
experts-staff-only = Это могут только сотрудники.
experts-alert =
    ❓ Вопрос №{$number} · консультация #{$id}
    {$client} · {$title}
    «{$text}»
experts-alert-open = Открыть тему
experts-muted = 🔕 {$name} не получает личных уведомлений по этой консультации (/unmute — вернуть).
experts-unmuted = 🔔 {$name} снова получает личные уведомления по этой консультации.
experts-away-set = 🌙 {$name}, вы отсутствуете: новых консультаций не будет до /back.
experts-away-already = 🌙 Вы уже отсутствуете; /back — вернуться.
experts-back-set = ☀️ С возвращением, {$name}: новые консультации снова могут приходить вам.
experts-back-already = ☀️ Вы и так на месте.
experts-snippet-usage = Как: /snippet add ИМЯ текст · /snippet list · /snippet del ИМЯ (ИМЯ: a-z, 0-9, «_», «-»).
experts-snippet-admins-only = Заготовки меняют только администраторы.
experts-snippet-added = Заготовка «{$name}» добавлена.
experts-snippet-replaced = Заготовка «{$name}» заменена.
experts-snippet-deleted = Заготовка «{$name}» удалена.
experts-snippet-missing = Заготовки «{$name}» нет.
experts-snippet-config-only = Заготовка «{$name}» задана в файле настроек; менять её там.
experts-snippet-bad-name = Имя заготовки: a-z, 0-9, «_» или «-», до 32 знаков.
experts-snippet-list = Заготовки:
experts-snippet-list-empty = Заготовок пока нет: /snippet add ИМЯ текст.
experts-snippet-send-usage = Как: /s ИМЯ (список: /snippet list).
experts-snippet-unknown = Заготовки «{$name}» нет (список: /snippet list).
experts-snippet-not-sent = Заготовка не отправлена: в этой консультации нечего отвечать.
sla-reminder-owner-away = Ведущий ({$name}) отсутствует.
report-owners-title = 🧑‍💼 Ведущие (живые консультации · вопросы без ответа)
report-owners-line = {$name}: {$consultations} · {$open}{$away}
report-owners-away = (отсутствует)
report-owners-unassigned = Без ведущего: {$count}
experts-sla-reminder-private = ⏰ Консультация #{$id}: ответ на вопрос №{$number} нужен до {$due} (осталось {$left} рабочего времени).
