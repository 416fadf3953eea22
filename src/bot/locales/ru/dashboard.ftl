# Панель сотрудников (src/dashboard, src/bot/features/dashboard.ts).

dashboard-menu-button = Панель
dashboard-open = 📈 Открыть панель
dashboard-here = Панель команды: графики, консультации, платежи и выгрузки. Открывается внутри Telegram.
dashboard-not-configured = У панели ещё нет публичного адреса: укажите dashboard.publicUrl в конфигурации (README: панель).
dashboard-staff-only = Панель доступна только сотрудникам.
