# /report в служебной группе (src/bot/features/report.ts, src/reports). Тексты сотрудникам — на языке команды.

report-usage = Формат: /report [7d | ГГГГ-ММ-ДД | ГГГГ-ММ-ДД ГГГГ-ММ-ДД]. Без аргументов — последние 30 дней.
report-admins-only = Отчёт доступен только администраторам.
report-title = 📊 Отчёт {$from} — {$to}
report-group-only = 👥 Только эта группа сотрудников ({$chat}): её консультации, их оплаты и вопросы. Все группы вместе: /report в основной группе.
report-groups = 👥 Группы сотрудников сейчас:
    {$list}
report-group-line = • {$chat}: {$active ->
    [one] {$active} идущая консультация
    [few] {$active} идущие консультации
   *[many] {$active} идущих консультаций
}, {$open ->
    [one] {$open} открытый вопрос
    [few] {$open} открытых вопроса
   *[many] {$open} открытых вопросов
}
report-revenue = 💰 Выручка: оплачено {$paid} ⭐ ({$paidCount} { $paidCount ->
        [one] платёж
        [few] платежа
       *[many] платежей
    }), возвращено {$refunded} ⭐ ({$refundedCount}), итого {$net} ⭐
report-consultations = 📦 Консультации, оплаченные за период, по текущему состоянию: {$list}
report-state-waiting = ждут старта
report-state-active = активны
report-state-closed = закрыты
report-state-revoked = возвращены
report-appeals = ❓ Принято вопросов: {$accepted}; отвечено вовремя {$inTime}, с опозданием {$late}; нарушений SLA {$breached}; ещё открыто {$open} (из них просрочено {$openBreached})
report-experts-title = ⏱ Медиана первого ответа, рабочих минут:
report-expert-line = • {$who}: {$median} мин по {$answered} { $answered ->
        [one] ответу
       *[other] ответам
    } ({$inTime} вовремя)
report-who-anonymous = анонимный администратор
report-who-admin = администратор id {$id}
report-who-expert = эксперт id {$id}
report-who-other = id {$id}
report-nearest-title = 🔜 Открытые вопросы ближе всего к нарушению:
report-nearest-line = • консультация #{$consultation}, вопрос №{$number}: срок {$due}, {$left}
report-nearest-left = осталось {$left} рабочего времени
report-nearest-over = срок прошёл
report-ledger-title = 🚫 Отказы журнала квот по причинам:
report-refusal-line = • {$reason} ({$account}): {$count}
report-admission-title = 🚫 Отклонённые сообщения клиентов по причинам:
report-admission-line = • {$reason}: {$count}
report-none = нет

# Причины и счета словами (коды остаются в базе и журнале аудита).
report-reason = { $reason ->
        [exhausted] ничего не осталось
        [held_by_active] остаток занят открытыми запросами
        [over_concurrency] слишком много запросов одновременно
        [no_account] нет лимита
        [inactive] лимит закрыт (возврат или вне периода)
        [no_consultation] нет оплаченной консультации
        [not_started] окно ещё не началось
        [window_closed] окно уже закрылось
        [closed] консультация завершена
        [no_appeals] вопросы закончились
        [refunded] консультация возвращена
        [banned] клиент заблокирован
        [unavailable] сервис был недоступен
       *[other] {$reason}
    }
report-account = { $account ->
        [consultation-appeals] вопросы консультации
        [consultation-drafts] ИИ-черновики консультации
        [expert-drafts] ИИ-черновики эксперта
        [expert-llm_money] бюджет ИИ эксперта
        [expert-llm_tokens] токены ИИ эксперта
        [desk-llm_money] бюджет ИИ
        [desk-llm_tokens] токены ИИ
        [desk-capacity-starts] места на старт
       *[other] {$account}
    }
