# The staff dashboard (src/dashboard, src/bot/features/dashboard.ts).

dashboard-menu-button = Dashboard
dashboard-open = 📈 Open the dashboard
dashboard-here = The desk's dashboard: charts, consultations, payments and exports. It opens inside Telegram.
dashboard-not-configured = The dashboard has no public address yet: set dashboard.publicUrl in the config (README: the dashboard).
dashboard-staff-only = The dashboard is for the desk's staff.
