# Тарифы, заказы и оплата (src/bot/features/tariffs.ts, payments.ts, status.ts, terms.ts).
# Идентификаторы приходят строками (без разделителей разрядов); суммы — целые звёзды.

btn-tariffs = 📋 Тарифы и условия
tariffs-intro = Выберите тариф, чтобы увидеть, что в него входит, условия и когда начинается окно:
tariff-button = {$title} — {$price} ⭐
tariff-gone = Этот тариф больше не продаётся. Вот что доступно сейчас.
tariff-card-title = {$title} — {$price} ⭐
tariff-card-included = Входит: { $appeals ->
        [one] {$appeals} вопрос
        [few] {$appeals} вопроса
       *[many] {$appeals} вопросов
    } (с уточнениями до ответа) в пределах окна.
tariff-card-drafts = Эксперт может готовить ответы с помощью ИИ-черновиков; каждый ответ проверяет и отправляет эксперт.
tariff-card-window = Окно приёма вопросов: {$window}.
tariff-card-start = Когда начинается: {$start}
tariff-card-sla = Ответ: до {$sla} рабочего времени на каждый принятый вопрос. График: {$hours}.
tariff-card-refund-deliver = Возврат: после возврата оплаты новые вопросы не принимаются, но на уже принятые ответ будет дан.
tariff-card-refund-stop = Возврат: после возврата оплаты консультация сразу закрывается, включая вопросы без ответа.
tariff-card-late-none = Если ответ опоздает: компенсации нет, эксперт ответит как можно скорее.
tariff-card-late-extend = Если ответ опоздает: окно продлевается на {$hours} ч.
tariff-card-late-extra = Если ответ опоздает: вы получите ещё один вопрос.
tariff-card-topups = Дополнения: внутри консультации можно докупить вопросы или часы; при возврате дополнения отменяется то, чем вы ещё не воспользовались (не заданные вопросы, не прошедшие часы).
tariff-card-terms = Условия (версия {$version}), принимаются оплатой:
start-mode-immediate = с момента оплаты.
start-mode-scheduled = в выбранное до оплаты время старта.
start-mode-on-request = когда вы нажмёте «Начать» после оплаты (в течение { $days ->
        [one] {$days} дня
       *[other] {$days} дней
    }, в рабочее время).
warn-desk-closed = ⚠️ Сейчас нерабочее время. Окно {$window} начнётся сразу, с оплатой, а срок ответа пойдёт только с {$opens}.
warn-desk-closed-choice = ⚠️ Сейчас нерабочее время: срок ответа пойдёт только с {$opens}. Выберите ниже: начать окно {$window} сейчас, с оплатой, или когда откроется приём (тогда всё окно считается с открытия).
btn-pay-start-now = ▶️ Принять условия, оплатить {$price} ⭐ и начать сейчас
btn-pay-start-at-opening = ⏳ Принять, оплатить {$price} ⭐, начать с открытия ({$at})
order-start-at-opening = Окно {$window} начнётся, когда откроется приём, {$at}, и продлится до {$end}. До этого оно не расходуется.
btn-accept-pay = ✅ Принять условия и оплатить {$price} ⭐
btn-pick-slot = 🗓 Выбрать время старта
btn-all-tariffs = « Все тарифы
btn-slot = {$at} · мест: {$left}
slots-pick = {$title}: выберите, когда начнётся окно. Место держится за вами на время оплаты.
slots-none = {$title}: все объявленные времена старта заняты. Встаньте в очередь на старт ниже, загляните позже или выберите другой тариф.
order-slot-chosen = Старт: {$at}. Место держится {$hold} мин. с момента открытия оплаты.
invoice-description-immediate = Консультация: { $appeals ->
        [one] {$appeals} вопрос
        [few] {$appeals} вопроса
       *[many] {$appeals} вопросов
    }, окно {$window} с момента оплаты. Условия {$terms}.
invoice-description-scheduled = Консультация: { $appeals ->
        [one] {$appeals} вопрос
        [few] {$appeals} вопроса
       *[many] {$appeals} вопросов
    }, окно {$window} с выбранного старта. Условия {$terms}.
invoice-description-on_request = Консультация: { $appeals ->
        [one] {$appeals} вопрос
        [few] {$appeals} вопроса
       *[many] {$appeals} вопросов
    }, окно {$window} с нажатия «Начать». Условия {$terms}.
invoice-description-at-opening = Консультация: { $appeals ->
        [one] {$appeals} вопрос
        [few] {$appeals} вопроса
       *[many] {$appeals} вопросов
    }, окно {$window} с открытия приёма, {$at}. Условия {$terms}.

order-refused-tariff-unknown = Этот тариф больше не продаётся; ничего не списано.
order-refused-terms-changed = Условия изменились с момента этого сообщения. Прочитайте актуальные условия ниже перед оплатой.
order-refused-slot-required = Сначала выберите время старта.
order-refused-slot-unknown = Это время старта больше не предлагается. Выберите заново.
order-refused-slot-started = Это время старта уже наступило. Выберите более позднее.
order-refused-banned = Покупки для этого аккаунта недоступны. Если это ошибка, напишите в /paysupport.
order-refused-slot-full = Это время старта только что заняли. Выберите другое.
order-refused-choose-start = Сейчас нерабочее время. Выберите, когда начнётся окно: сейчас или когда откроется приём.
order-refused-opening-changed = Время открытия приёма изменилось с момента этого сообщения (или приём уже открыт). Выберите заново ниже.

precheckout-order-unknown = Заказ не найден. Выберите тариф заново: /tariffs.
precheckout-order-foreign = Этот счёт выставлен другому аккаунту. Откройте /tariffs и оформите свой.
precheckout-wrong-currency = Этот счёт оплачивается только звёздами Telegram.
precheckout-wrong-amount = Сумма ({$amount} ⭐) не совпадает с ценой заказа ({$price} ⭐). Откройте новый счёт: /tariffs.
precheckout-order-cancelled = Этот заказ отменён. Выберите тариф заново: /tariffs.
precheckout-order-paid = Этот заказ уже оплачен, повторно ничего не списано. См. /status.
precheckout-order-expired = Срок этого счёта истёк. Откройте новый: /tariffs.
precheckout-tariff-unavailable = «{$title}» больше не продаётся; ничего не списано. Актуальные тарифы: /tariffs.
precheckout-slot-started = Это время старта уже наступило; ничего не списано. Выберите более позднее: /tariffs.
precheckout-capacity-full = Все места на этот старт сейчас заняты; ничего не списано. Попробуйте другой день или время.
precheckout-banned = Покупки для этого аккаунта недоступны; ничего не списано.
precheckout-unavailable = Сервис временно недоступен, ничего не списано. Попробуйте через минуту.

consultation-activated =
    ✅ Консультация «{$title}» активна.
    Окно: {$start} — {$end}.
    Пришлите вопрос сюда; уточнения следующими сообщениями до ответа относятся к нему же. Ответ на каждый принятый вопрос — в течение {$sla} рабочего времени. Вопросы, принятые до конца окна, разбираются и после него.
consultation-activated-closed = ⏳ Сейчас нерабочее время: эксперт начнёт отвечать, когда откроется приём, {$opens}. Вопрос можно прислать уже сейчас; срок ответа пойдёт с этого момента.
pay-confirm-on-request =
    ✅ Оплата получена: {$amount} ⭐ за «{$title}».
    Окно {$window} начнётся, когда вы нажмёте «Начать» (в рабочее время, до {$startBy}). Подготовьте задачу и нажмите, когда будете готовы.
pay-confirm-at-opening =
    ✅ Оплата получена: {$amount} ⭐ за «{$title}».
    Окно начнётся, когда откроется приём: {$start} — {$end}. Мы напишем, когда оно откроется; с этого момента присылайте вопросы сюда.
pay-confirm-scheduled =
    ✅ Оплата получена: {$amount} ⭐ за «{$title}».
    Ваше окно: {$start} — {$end}. Мы напишем, когда оно откроется; с этого момента присылайте вопросы сюда.
pay-late =
    ✅ Оплата получена: {$amount} ⭐ за «{$title}» (заказ {$order}).
    Место, которое держалось за вами, освободилось до прихода оплаты, и этот старт уже заполнен. Оплата сохранена. Выберите один из ближайших свободных стартов ниже или попросите возврат.
pay-late-no-options =
    ✅ Оплата получена: {$amount} ⭐ за «{$title}» (заказ {$order}).
    Место, которое держалось за вами, освободилось до прихода оплаты, а свободных стартов сейчас нет. Оплата сохранена: администратор предложит дату старта, или вы можете попросить возврат.
pay-overpaid =
    Этот заказ («{$title}», заказ {$order}) уже был оплачен, поэтому повторная оплата {$amount} ⭐ — лишняя. В консультации ничего не меняется; администратор вернёт лишний платёж.
pay-unmatched = Мы получили {$amount} ⭐, но не смогли связать платёж с заказом. Ничего не потеряно: администратор разберётся или вернёт оплату. Можно также написать в /paysupport.
btn-start = ▶️ Начать
btn-start-at = ▶️ Начать {$at}
btn-ask-refund = ↩️ Попросить возврат
btn-pick-start = 🗓 Выбрать старт
start-scheduled-ok = Старт согласован. Мы напишем, когда окно откроется.
start-options = «{$title}»: выберите старт:
start-options-none = «{$title}»: свободных стартов сейчас нет. Администратор свяжется с вами, или вы можете попросить возврат.
order-start-agreed = 🗓 «{$title}»: окно начнётся {$at}. Мы напишем, когда оно откроется.
order-start-period-ended = Срок, в который можно было начать «{$title}» (заказ {$order}), истёк. Выберите старт ниже или попросите возврат.

start-refused-order-unknown = Заказ не найден.
start-refused-not-waiting = Этот заказ не ожидает старта.
start-refused-already-active = Консультация уже началась. См. /status.
start-refused-refunded = По этому заказу оформлен возврат.
start-refused-desk-closed = Сейчас нерабочее время. Окно можно будет начать с {$at}.
start-refused-start-expired = Срок для старта этого заказа истёк. Выберите старт в сообщении выше или напишите в /paysupport.
start-refused-day-full = Все места на сегодня заняты. Ближайший свободный старт: {$at}.
start-refused-needs-start-date = Сначала выберите дату старта для этого заказа.
start-refused-option-gone = Этот старт уже недоступен. Выберите другой.
button-outdated = Эта кнопка устарела.

refund-done = ↩️ Вам возвращено {$amount} ⭐.
refund-done-consultation-deliver = ↩️ Вам возвращено {$amount} ⭐ за «{$title}». Новые вопросы в этой консультации не принимаются; ответы на уже принятые вопросы будут отправлены.
refund-done-consultation-stop = ↩️ Вам возвращено {$amount} ⭐ за «{$title}». Консультация закрыта, включая вопросы без ответа.

status-title = { $own ->
        [yes] Ваши заказы:
       *[no] Ваши заказы (время {$zone}):
    }
status-empty = У вас пока нет заказов.
status-created = Заказ {$order} · {$title} — ожидает оплаты ({$price} ⭐).
status-reserved = Заказ {$order} · {$title} — ожидает оплаты ({$price} ⭐).
status-active = Заказ {$order} · {$title} — ✅ активен: {$start} — {$end}.
status-closed = Заказ {$order} · {$title} — завершён (окно {$start} — {$end}).
status-refunded = Заказ {$order} · {$title} — возврат.
status-waiting-start = Заказ {$order} · {$title} — оплачен; нажмите «Начать», когда будете готовы (до {$startBy}).
status-scheduled = Заказ {$order} · {$title} — оплачен; старт {$start}.
status-needs-start = Заказ {$order} · {$title} — оплачен; нужно выбрать дату старта.
btn-start-order = ▶️ Начать заказ {$order}
btn-pick-start-order = 🗓 Выбрать старт для заказа {$order}
tz-change-button = 🕒 Сменить часовой пояс
tz-pick = Сейчас время показывается {$zone}. Выберите свой часовой пояс:
tz-set = Часовой пояс установлен: {$zone}.
tz-city = { $zone ->
        [Europe-Kaliningrad] Калининград
        [Europe-Moscow] Москва
        [Europe-Samara] Самара
        [Asia-Yekaterinburg] Екатеринбург
        [Asia-Omsk] Омск
        [Asia-Novosibirsk] Новосибирск
        [Asia-Krasnoyarsk] Красноярск
        [Asia-Irkutsk] Иркутск
        [Asia-Vladivostok] Владивосток
        [Europe-London] Лондон
        [Europe-Berlin] Берлин
        [Asia-Tbilisi] Тбилиси
        [Asia-Almaty] Алматы
        [Asia-Dubai] Дубай
        [America-New_York] Нью-Йорк
        [UTC] UTC
       *[other] {$name}
    }

terms-title = Условия (версия {$version})
terms-tariff = {$title}: {$refund} {$late}
terms-tariffs-title = Возвраты и опоздания ответа по тарифам:
terms-footer = Проблемы с оплатой: /paysupport. Конфиденциальность: /privacy.
privacy-title = Конфиденциальность

# Перенос или отмена запланированного старта (src/bot/features/change-start.ts, src/payments/change-start.ts).
btn-move-start = 🗓 Перенести заказ {$order}
btn-cancel-start = ✖️ Отменить заказ {$order}
btn-cancel-start-yes = Да, отменить и вернуть оплату
status-change-closed = Перенести или отменить можно было до {$deadline}; до старта осталось слишком мало времени.
change-pick = «{$title}» начинается {$at}. Выберите другой старт (изменить можно до {$deadline}):
change-no-slots = «{$title}»: других стартов со свободными местами сейчас нет.
order-start-moved = 🗓 «{$title}» (заказ {$order}) теперь начинается {$at}. Мы напишем, когда окно откроется.
change-cancel-confirm = Отменить «{$title}» и вернуть {$amount} ⭐?
change-cancel-failed = Возврат не прошёл, ничего не изменилось. Попробуйте ещё раз или напишите в /paysupport.
change-cancel-in-progress = Возврат уже выполняется.
change-refused-unknown = Этот заказ нельзя изменить с этого аккаунта.
change-refused-not-waiting = Этот заказ не ждёт старта, поэтому перенести или отменить его здесь нельзя. Если что-то не так, напишите в /paysupport.
change-refused-too-late = Перенести или отменить можно было до {$deadline}; до старта осталось слишком мало времени. При проблеме напишите в /paysupport.
change-refused-started = Консультация уже началась, перенести или отменить её больше нельзя (это было возможно до {$deadline}). При проблеме напишите в /paysupport.
change-refused-slot-gone = Этот старт больше не предлагается. Выберите другой.
change-refused-slot-full = Этот старт только что заняли. Выберите другой.

# A desk being set up (issue 24): nothing is sold until it has an owner, a staff group and a tariff.
desk-not-open = «{$desk}» пока не принимает заказы: купить здесь ничего нельзя, пока всё не настроено. Загляните позже.
order-refused-not-open = Здесь пока ничего нельзя купить; ничего не списано.
