# ИИ-черновики для экспертов (src/bot/features/drafting.ts, src/drafting). Для сотрудников: на языке команды.
# Отсюда ничего не уходит клиенту: черновик попадает к клиенту только кнопкой «Отправить», как ответ эксперта.

drafting-btn-draft = ✍️ Черновик ответа
drafting-btn-retry = ✍️ Ещё раз
drafting-btn-send = ✅ Отправить клиенту
drafting-btn-edit = ✏️ Править
drafting-btn-discard = 🗑 Отбросить

drafting-ack = ⏳ Готовлю черновик #{$id} (осталось {$left} из {$total} черновиков по этой консультации; этот может занять до {$tokens} токенов, модель {$model}).

drafting-draft =
    🤖 Черновик #{$id}{ $version ->
        [1] {""}
       *[other] , версия {$version}
    } · {$model} · {$usage}{ $truncated ->
        [yes] {" "}· сокращён до размера сообщения
       *[no] {""}
    }
    Клиенту ничего не уходит, пока вы не нажмёте «Отправить клиенту».
    ———
    {$text}
drafting-usage = {$input} + {$output} токенов, списано {$cost}
drafting-usage-unreported = провайдер не сообщил расход: списана верхняя оценка ({$held})
drafting-held = {$tokens} токенов{ $money ->
        [none] {""}
       *[other] {" "}/ {$money}
    }
drafting-charged-usage = {$input} + {$output} токенов = {$cost}
drafting-charged-bound = удержанную верхнюю оценку, {$held}
drafting-edited-by = исправлено id {$staff}
drafting-empty = ⚠️ Черновик #{$id}: модель вернула пустой текст ({$usage}). Отправлять нечего.
drafting-failed-unbilled = ⚠️ Черновик #{$id} не получился: {$reason}. Ничего не списано.
drafting-failed-unknown =
    ⚠️ Черновик #{$id} не получился: {$reason}. Провайдер мог его списать, поэтому до {$held} остаётся удержанным, пока администратор не сверит (/drafts).
drafting-edit-prompt = ✏️ Черновик #{$id}: пришлите исправленный текст следующим сообщением в этой теме (в течение {$minutes} мин). Клиенту он не уйдёт: бот предложит его снова с кнопкой «Отправить клиенту».
drafting-reconciled-commit = 🧾 Черновик #{$id} сверен (id {$admin}): списано {$charged}.
drafting-reconciled-release = 🧾 Черновик #{$id} сверен (id {$admin}): освобождено, ничего не списано.

## Отказы (ничего не зарезервировано и не поставлено в очередь)

drafting-refused-disabled = ИИ-черновики здесь выключены.
drafting-refused-provider-unavailable = ИИ-провайдер сейчас недоступен. Ничего не списано.
drafting-refused-not-included = Черновики не входят в этот тариф ({$tariff}).
drafting-refused-model-not-allowed = Модель {$model} не разрешена. Разрешены: {$allowed}.
drafting-refused-no-open-appeal = Нет открытого вопроса, на который нужен черновик: последний вопрос клиента уже отвечен.
drafting-refused-not-active = Черновиков нет: консультация вне своего окна ({$state}).
drafting-refused-no-drafts-left =
    По этой консультации черновиков не осталось ({$left} из {$total}){ $held ->
        [0] .
       *[other] ; {$held} удерживает черновик в работе (вернётся, если он не получится).
    }
drafting-refused-expert-cap =
    Ваш дневной лимит черновиков исчерпан (использовано {$used} из {$cap}{ $held ->
        [0] {""}
       *[other] , {$held} в работе
    }). Сбросится в {$resetsAt}.
drafting-refused-desk-budget =
    Бюджет команды на черновики за {$month} исчерпан: использовано {$used} и удержано {$held} из {$limit}{ $unit ->
        [tokens] {" "}токенов
       *[money] {""}
    }; этому черновику нужно до {$needed}{ $unit ->
        [tokens] {" "}токенов
       *[money] {""}
    }.
drafting-refused-too-many-running = Слишком много черновиков готовится одновременно ({$running} в работе, предел {$max}). Попробуйте, когда один закончится.
drafting-refused-unavailable = Черновики сейчас недоступны (учёт квот не ответил). Ничего не списано.

## Ответы на кнопки

drafting-cb-staff-only = Это доступно только сотрудникам.
drafting-cb-queued = Готовлю черновик…
drafting-cb-sent = Отправлено клиенту.
drafting-cb-withheld = Записано, но не доставлено: консультация возвращена, ответы по ней не отправляются.
drafting-cb-discarded = Отброшено.
drafting-cb-edit = Пришлите исправленный текст следующим сообщением в этой теме.
drafting-cb-already-sent = Этот черновик уже отправлен.
drafting-cb-already-discarded = Этот черновик отброшен.
drafting-cb-already-editing = Вы уже правите этот черновик.
drafting-cb-stale = Это старая версия: используйте версию {$version}.
drafting-cb-not-ready = Этот черновик нельзя использовать ({$state}).
drafting-cb-not-found = Черновик не найден.
drafting-cb-duplicate = Уже запрошено.

## Администраторы: сверка черновиков с неизвестным исходом

drafting-admin-only = Это могут только администраторы.
drafting-unknown-none = Черновиков, ждущих сверки, нет.
drafting-unknown-list =
    Черновики с неизвестным исходом у провайдера (удержаны до сверки):
    {$list}
    /draft_commit <id> [input output] — списать токены по отчёту провайдера (без чисел — удержанную верхнюю оценку); /draft_release <id> — освободить (провайдер ничего не списал).
drafting-unknown-item = #{$id} · консультация #{$consultation} · от id {$by} · {$age} · удерживает {$held} · {$reason}
drafting-reconcile-usage = Формат: /draft_commit <id> [input_tokens output_tokens] или /draft_release <id>
drafting-reconcile-committed = Черновик #{$id}: списано {$charged}.
drafting-reconcile-released = Черновик #{$id}: освобождено, ничего не списано.
drafting-reconcile-not-unknown = Черновик #{$id} не ждёт сверки ({$state}{ $reconciliation ->
        [none] {""}
       *[other] : {$reconciliation}
    }).
drafting-reconcile-not-found = Черновика #{$id} здесь нет.
drafting-reconcile-refused = Черновик #{$id}: учёт отказал ({$reason}).
