# /settings: владелец и администраторы меняют настройки в личном чате с ботом (src/bot/features/settings).

st-refused = Настройки могут менять только владелец и администраторы.
st-home = Настройки. Что хотите изменить?
st-btn-tariffs = 📋 Тарифы
st-btn-plans = 🔁 Планы
st-btn-hours = 🕒 Часы работы
st-btn-texts = 📄 Условия и приватность
st-btn-back = ← Назад
st-btn-cancel = Отмена
st-cancelled = Отменено, ничего не изменилось.
st-gone = Этого уже нет: кто-то удалил это за это время.
st-done = Сохранено.
st-saved = Сохранено. { $field } теперь: { $value }
st-created = Создано. Клиенты уже видят его в /tariffs, цена { $value } ⭐.
st-conflict = Настройки за это время изменил кто-то другой, поэтому ничего не сохранено. { $field } сейчас: { $value }
st-conflict-screen = Настройки за это время изменил кто-то другой, поэтому ничего не сохранено. Вот какие они сейчас.
st-invalid = { $field }: значение не принято ({ $reason }). Ничего не изменилось; попробуйте ещё раз или нажмите «Отмена».

st-tariffs = { $count ->
        [0] Тарифов пока нет.
        [one] { $count } тариф. Выберите его, чтобы изменить:
        [few] { $count } тарифа. Выберите, какой изменить:
       *[many] { $count } тарифов. Выберите, какой изменить:
    }
st-tariff-button = { $title } — { $price } ⭐
st-tariff-button-paused = ⏸ { $title } — { $price } ⭐
st-btn-new-tariff = ➕ Новый тариф
st-tariff = { $title } ({ $state })
    Цена: { $price } ⭐
    Окно: { $hours ->
        [one] { $hours } час
        [few] { $hours } часа
       *[many] { $hours } часов
    }
    Вопросов: { $questions }
    Ответ: в течение { $sla } рабочих часов
    Старт: { $mode }
st-state-on-sale = продаётся
st-state-paused = продажи приостановлены: клиенты его не видят и не могут оплатить; оплаченные заказы идут как проданы
st-mode-immediate = при оплате
st-mode-on_request = когда клиент нажмёт «Начать»
st-mode-scheduled = в объявленное время
st-btn-price = Цена
st-btn-title = Название
st-btn-questions = Вопросы
st-btn-window = Окно
st-btn-pause = ⏸ Приостановить продажи
st-btn-resume = ▶️ Возобновить продажи
st-btn-delete = 🗑 Удалить
st-btn-delete-yes = Да, удалить
st-delete-confirm = Удалить «{ $title }»? Он больше не будет продаваться, неоплаченные счета по нему будут отклонены. Оплаченные заказы сохранят то, что было продано.

st-plans = { $count ->
        [0] Планов пока нет.
        [one] { $count } план. Новая цена действует только для новых подписок; у текущих подписчиков она прежняя.
        [few] { $count } плана. Новая цена действует только для новых подписок; у текущих подписчиков она прежняя.
       *[many] { $count } планов. Новая цена действует только для новых подписок; у текущих подписчиков она прежняя.
    }
st-plan-button = { $title } — { $price } ⭐ / 30 дней
st-plan-button-paused = ⏸ { $title } — { $price } ⭐ / 30 дней
st-plan-state-paused = приостановлен: новым подписчикам не предлагается; текущие подписки продлеваются как куплены
st-plan = { $title } ({ $state })
    Цена: { $price } ⭐ за 30 дней (для новых подписок)
    Вопросов за период: { $questions }

st-hours = Часы работы (часовой пояс: { $zone }):
st-hours-day = { $day }: { $hours }
st-day-off = выходной
st-day-mon = Пн
st-day-tue = Вт
st-day-wed = Ср
st-day-thu = Чт
st-day-fri = Пт
st-day-sat = Сб
st-day-sun = Вс
st-holidays = Праздники: { $dates }
st-extra-days = Дополнительные рабочие дни: { $dates }
st-btn-zone = Часовой пояс
st-btn-add-holiday = ➕ Праздник
st-btn-add-extra = ➕ Рабочий день
st-btn-remove-date = ✕ { $date }
st-zone-pick = Команда работает по времени: { $zone }. Выберите часовой пояс:

st-texts = Условия (версия { $version }) и приватность. Изменение условий — новая версия: оплаченные заказы сохраняют условия, на которых были проданы.
st-btn-terms = Условия ({ $lang })
st-btn-privacy = Приватность ({ $lang })
st-lang-ru = русский
st-lang-en = английский

st-ask-priceStars = Пришлите новую цену в целых звёздах. Сейчас: { $current }
st-ask-title = Пришлите новое название. Сейчас: { $current }
st-ask-appeals = Пришлите, сколько вопросов входит в тариф. Сейчас: { $current }
st-ask-questions = Пришлите, сколько вопросов входит в период. Сейчас: { $current }
st-ask-windowHours = Пришлите длину окна в часах. Сейчас: { $current }
st-ask-weekday = Пришлите часы, например «10:00-18:00» или «10:00-13:00, 14:00-18:00»; «-» — выходной. Сейчас: { $current }
st-ask-holiday = Пришлите дату праздника в виде ГГГГ-ММ-ДД, например 2026-12-31. Сейчас праздники: { $current }
st-ask-extra = Пришлите дату и часы дополнительного рабочего дня, например «2026-12-05 10:00-15:00». Сейчас: { $current }
st-ask-terms = Пришлите новый текст условий. Сейчас:
    { $current }
st-ask-privacy = Пришлите новый текст о приватности. Сейчас:
    { $current }

st-new-code = Новый тариф. Пришлите короткий код (a-z, 0-9, «-» или «_»), например «quick».
st-new-title = Название, как его увидят клиенты:
st-new-priceStars = Цена в целых звёздах:
st-new-windowHours = Сколько часов длится окно:
st-new-appeals = Сколько вопросов входит:
st-new-slaBusinessHours = За сколько рабочих часов отвечать на каждый вопрос:
st-new-startMode = Когда начинается окно?

st-field-code = Код
st-field-title = Название
st-field-priceStars = Цена
st-field-windowHours = Окно
st-field-appeals = Вопросы
st-field-questions = Вопросы
st-field-slaBusinessHours = Время ответа
st-field-startMode = Старт
st-field-weekday = Часы
st-field-weekly = Часы
st-field-schedule = График
st-field-holiday = Праздник
st-field-holidays = Праздники
st-field-extra = Рабочий день
st-field-extraWorkingDays = Дополнительные рабочие дни
st-field-timezone = Часовой пояс
st-field-terms = Условия
st-field-text = Текст
st-field-privacy = Приватность

order-refused-tariff-paused = Продажи этого тарифа приостановлены; ничего не списано. Что доступно сейчас — в /tariffs.
plan-refused-plan-paused = Новые подписки на этот план приостановлены. Что доступно сейчас — в /plan.
