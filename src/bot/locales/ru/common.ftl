welcome =
    Здравствуйте, {$name}! Это {$desk}.
    Здесь можно купить консультацию эксперта за Telegram Stars и задавать вопросы в оплаченное окно.
welcome-tariffs = Что можно купить:
tariff-line = • {$title} — {$price} ⭐
help =
    /start — о консультациях и тарифах
    /tariffs — тарифы и что в них входит
    /status — ваши заказы и консультации
    /timezone — часовой пояс, в котором показывается время
    /transcript — переписка завершённой консультации
    /terms — условия
    /privacy — политика конфиденциальности
    /paysupport — проблема с оплатой
    /cancel — прервать начатое (например, обращение в /paysupport)
cmd-start = О консультациях
cmd-tariffs = Тарифы
cmd-status = Мои консультации
cmd-help = Помощь
cmd-transcript = Переписка консультации
cmd-terms = Условия
cmd-privacy = Конфиденциальность
cmd-paysupport = Поддержка по оплате
cmd-timezone = Часовой пояс
cmd-cancel = Прервать начатое
