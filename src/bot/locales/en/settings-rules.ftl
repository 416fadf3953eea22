# /settings → Desk rules (issue 27; src/config/rules.schema.ts): promises, windows, zones, languages, readiness and
# retention, each with the old constant's value as its default.

st-btn-rules = 📏 Desk rules
st-rules = The desk's rules:
st-rules-upkeep = Upkeep (readiness and how long records are kept):
st-rule-line = • { $field }: { $value }

st-field-disputeAnswerHours = Payment dispute answer, business hours
st-field-unpaidOrderHours = Unpaid order expires after, hours
st-field-ratingEditDays = Rating can be changed for, days
st-field-lowRating = Low rating, stars or fewer
st-field-zones = Time zones offered
st-field-languages = Languages
st-field-stallSeconds = Jobs stalled after, seconds
st-field-deadLetterMinutes = Failed jobs shown as new for, minutes
st-field-processedUpdateHours = Handled updates kept, hours
st-field-inboxUpdateHours = Incoming updates kept, hours
st-field-outboundMessageDays = Sent-message records kept, days
st-field-conversationStateDays = Unfinished conversations kept, days
st-field-refusalToldHours = Refusals remembered, hours
st-field-privateAlertDays = Private alerts remembered, days

st-ask-disputeAnswerHours = Send within how many business hours (1 to 72) a client with a payment dispute (/paysupport) is promised an answer. Now: { $current }
st-ask-unpaidOrderHours = Send after how many hours (1 to 168) an unpaid order expires: its invoice is no longer accepted. Now: { $current }
st-ask-ratingEditDays = Send for how many days (1 to 90) after rating a consultation a client may change the rating or comment on it. Now: { $current }
st-ask-lowRating = Send the number of stars (0 to 4) at or below which a rating is told to the admins and the expert; 0 turns it off. Now: { $current }
st-ask-zones = Send the time zones clients may choose from (and the desk's zone is chosen from), as IANA names separated by commas, e.g. “Europe/Moscow, Asia/Dubai”; at most 24. Now: { $current }
st-ask-languages = Send the languages the desk speaks, separated by commas: “en”, “ru” or both; the desk's main language must stay in. Clients of other languages are answered in the main one. Now: { $current }
st-ask-stallSeconds = Send after how many seconds (30 to 3600) due jobs that no worker takes make the server report not ready. Now: { $current }
st-ask-deadLetterMinutes = Send for how many minutes (1 to 1440) jobs that failed for good are reported as new. Now: { $current }
st-ask-processedUpdateHours = Send how many hours (24 to 144) the record of each handled Telegram update is kept; fewer than 24 would let a redelivered update be handled twice. Now: { $current }
st-ask-inboxUpdateHours = Send how many hours (24 to 144) handled incoming updates are kept; fewer than 24 would let a redelivered update be handled twice. Now: { $current }
st-ask-outboundMessageDays = Send how many days (30 to 365) the records of sent messages are kept; fewer than 30 could let a retried job send a message twice. Now: { $current }
st-ask-conversationStateDays = Send after how many days (1 to 365) an unfinished conversation with the bot is forgotten. Now: { $current }
st-ask-refusalToldHours = Send how many hours (1 to 720) the bot remembers having told a chat a refusal. Now: { $current }
st-ask-privateAlertDays = Send how many days (8 to 365) the bot remembers which private alerts it sent; fewer than 8 could repeat an alert. Now: { $current }
