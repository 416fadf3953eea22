# The staff's command menu (src/bot/commands.ts): one line each, shown next to the command in Telegram's menu.
# The clients' commands are described with their features (cmd-start, cmd-tariffs, ...).
cmd-card = Show the consultation's card again
cmd-note = Save a note for the staff
cmd-extend = Extend the answer window by some hours
cmd-close = Close the consultation
cmd-ban = Stop taking messages from this client
cmd-unban = Take this client's messages again
cmd-assign = Hand the consultation to another expert
cmd-mute = No private alerts about this consultation
cmd-unmute = Private alerts about this consultation again
cmd-s = Send a prepared answer
cmd-draft = Ask the AI for a draft answer
cmd-drafts = Drafts waiting for an admin's decision
cmd-away = I am away: give me no new consultations
cmd-back = I am back
cmd-snippet = Prepared answers: add, list, delete
cmd-dashboard = Open the dashboard
cmd-refunds = Payments waiting for a refund decision
cmd-reconcile = Check payments against Telegram now
cmd-report = Desk report for a period
cmd-mine = My open questions
cmd-staff = The desk's staff
cmd-invite = Invite an expert or an admin
cmd-myname = The name clients see
cmd-settings = Desk settings
