# The transcript as staff read it in the dashboard (src/lifecycle/transcript.ts, StaffReader), and its last line
# while the consultation has not ended.
transcript-client = Client
transcript-footer-active = The consultation is still active: its window ends {$until}.
transcript-footer-waiting = The consultation has not started yet: its window opens {$start}.
transcript-footer-unscheduled = The consultation has not started yet: its start date is not agreed.
