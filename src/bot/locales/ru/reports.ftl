# /report в служебной группе (src/bot/features/report.ts, src/reports). Тексты сотрудникам — на языке стола.

report-usage = Формат: /report [7d | ГГГГ-ММ-ДД | ГГГГ-ММ-ДД ГГГГ-ММ-ДД]. Без аргументов — последние 30 дней.
report-admins-only = Отчёт доступен только администраторам стола.
report-title = 📊 Отчёт {$from} — {$to} ({$zone})
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
