# Расшифровка в панели сотрудников (src/lifecycle/transcript.ts, StaffReader) и её последняя строка, пока
# консультация не завершилась.
transcript-client = Клиент
transcript-footer-active = Консультация ещё идёт: её окно закрывается {$until}.
transcript-footer-waiting = Консультация ещё не началась: её окно откроется {$start}.
transcript-footer-unscheduled = Консультация ещё не началась: дата начала не согласована.
