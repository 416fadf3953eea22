# Setting the desk up from Telegram (src/setup, src/bot/features/setup.ts): the owner link, staff groups, invites,
# the staff list. Staff texts, in the reader's language.

setup-not-open = This desk is not taking new orders right now. Please come back a little later.
precheckout-not-open = This desk is not open right now, so nothing was charged. Please try again later.
setup-admins-only = Only the desk's owner or an admin can do this.

setup-owner-welcome = 🎉 {$name}, you are the owner of this desk now.
setup-owner-already = {$name}, you are this desk's owner already.
setup-claim-unknown = This owner link is not valid. Check that it was copied in full: it is printed when the app starts.
setup-claim-used = This owner link has been used already: the desk has an owner. Ask them to invite you with /invite.
setup-claim-expired = This owner link has expired. Restart the app: it prints a new one.
setup-claim-owned = This desk has an owner already. Ask them to invite you with /invite.

setup-guide-title = Next steps:
setup-guide-group = • Staff group: create a supergroup for your team, turn on Topics in its settings, and add me to it as an admin with Manage topics, Pin messages and Delete messages. I will ask you here to confirm it.
setup-guide-group-done = • Staff group: done ✓ (add me to another group the same way to spread the work).
setup-guide-group-broken = • The staff group «{$title}» needs fixing: I sent you what is missing.
setup-guide-invite = • Experts: send /invite expert and pass the link on (/invite expert 3 for three people; /invite admin for an admin).
setup-guide-invite-done = • Experts: invited ✓ (/staff shows the team; /invite expert for more).
setup-guide-tariffs = • Tariffs: add at least one; the desk sells nothing without one.
setup-guide-tariffs-done = • Tariffs: set ✓
setup-guide-open = ✅ The desk is open: clients can buy consultations.
setup-guide-closed = Clients cannot buy anything until the steps above are done.

setup-group-confirm = I am in «{$title}» with every right I need. Use «{$title}» as the staff group?
setup-btn-use-group = ✅ Use «{$title}» as the staff group
setup-group-missing = I was added to «{$title}», but it cannot be the staff group yet. What is missing:
setup-group-still-missing = «{$title}» still cannot be the staff group. What is missing:
setup-group-problem-gone = • I am not in the group.
setup-group-problem-not-supergroup = • It is not a supergroup: turn on Topics in the group's settings (Telegram makes it a supergroup then).
setup-group-problem-not-forum = • Turn on Topics in the group's settings.
setup-group-problem-not-admin = • Make me an admin of the group, with Manage topics, Pin messages and Delete messages.
setup-group-problem-manage-topics = • Make me an admin with Manage topics.
setup-group-problem-pin-messages = • Give me the Pin messages right.
setup-group-problem-delete-messages = • Give me the Delete messages right.
setup-group-bound-home = «{$title}» is the staff group now: every consultation gets its own topic there.
setup-group-bound-listed = «{$title}» is one more staff group now: new consultations are spread over the groups.
setup-group-already = «{$title}» is a staff group already.
setup-group-not-ready = «{$title}» cannot be the staff group right now: something changed since I asked. Check my rights there.
setup-group-unknown = I do not know this group. Add me to it again.
setup-group-broken = ⚠️ The staff group «{$title}» changed, and I cannot work there as before:
setup-group-removed = ⚠️ I was removed from the staff group «{$title}». Add me back as an admin with Manage topics, Pin messages and Delete messages.
setup-group-not-selling = New consultations are not sold until this is fixed; the ones already running go on as far as they can.
setup-group-fixed = ✅ The staff group «{$title}» works again.

setup-invite-usage = Send /invite expert or /invite admin, optionally with how many people may use the link (1-100), for example /invite expert 3.
setup-invite-owner-only = Only the owner can invite admins; you can invite experts with /invite expert.
setup-invite-uses = The number of people must be from 1 to 100, for example /invite expert 3.
setup-invite-created =
    Invite link for { $role ->
        [admin] an admin
       *[expert] an expert
    }, for { $uses ->
        [one] one person
       *[other] {$uses} people
    }, valid until {$until}:

    {$link}

    Pass it on: whoever opens it joins the desk's staff.
setup-join-expert = Welcome to the desk, {$name}: you are an expert now. Consultations will come to you in the staff group.
setup-join-admin = Welcome to the desk, {$name}: you are an admin now.
setup-join-already = You are on the desk's staff already, as { $role ->
        [admin] an admin
       *[expert] an expert
    }.
setup-join-unknown = This invite link is not valid. Check that it was copied in full, or ask for a new one.
setup-join-expired = This invite link has expired. Ask for a new one.
setup-join-used-up = This invite link has been used up. Ask for a new one.
setup-join-owner = You are the desk's owner; an invite does not change that.
setup-join-is-admin = You are an admin already; an expert's invite does not change that.
setup-joined-expert = 👋 {$name} joined the desk as an expert.
setup-joined-admin = 👋 {$name} joined the desk as an admin.

setup-staff-title = The desk's staff:
setup-staff-line = {$name}: { $role ->
        [owner] owner
        [admin] admin
       *[expert] expert
    }
setup-staff-unnamed = a staff member without a name (/myname sets one)
setup-staff-empty = Nobody else yet: invite people with /invite expert.
setup-staff-owner-only = Only the owner changes the staff.
setup-staff-btn-admin = {$name}: make admin
setup-staff-btn-expert = {$name}: make expert
setup-staff-btn-remove = {$name}: remove
setup-staff-done-admin = {$name} is an admin now.
setup-staff-done-expert = {$name} is an expert now.
setup-staff-done-remove = {$name} is no longer on the staff.
setup-staff-is-owner = The owner cannot be removed or made an expert.
setup-staff-not-staff = They are not on the staff any more.
setup-staff-invalid = This change is refused, nothing was changed: {$detail}
setup-myname-usage = Send /myname and your name (1-64 characters): the name clients and colleagues see.
setup-myname-done = Your name on the desk is «{$name}» now.
setup-myname-not-staff = Only the desk's staff have a name here.
setup-myname-bad-name = A name is 1 to 64 characters.
