-- desk_admit: the admission of a client message (src/consultations/admission.ts calls it through
-- desk.repository.ts). Why a function: every client message runs it, and as separate statements the lock, the state
-- read and the insert cost three round trips and three plannings (~0.5 ms of planning alone per message); PL/pgSQL
-- keeps its plans per connection and takes one round trip. It decides and, for the common case (the message joins
-- an open appeal), stores the message; anything that needs the ledger (opening an appeal) or other work is handed
-- back to the caller, still holding the lock.
--
-- p_fast: called on its own, outside any transaction, it admits the common case completely in one statement - no
-- BEGIN/COMMIT - when the message joins an open appeal and the topic lane already has a job queued (so there is
-- nothing to write to the outbox). Everything else comes back as `retry`, having changed nothing, and the caller
-- runs the full admission in a transaction (p_fast = false). The decision is the same either way: lock, clock
-- after the lock, the access rule, UNIQUE(bot_id, chat_id, message_id); the statement is the transaction.
--
-- desk_consultation.in_queued: a topic-lane job is queued and has not started draining; an admission then needs no
-- new job (the lane clears the flag, under this row's lock, before it reads what is pending). That saves the job
-- insert for every message of a burst, which under load (a lane waits for Telegram's 20 messages a minute per
-- group) is most of them.
--
-- Several live consultations (issue 26): the message goes to the one it names - p_target (a held message released
-- to the client's choice), the one whose message it replies to (the bot's messages sent for a consultation,
-- consultation_client_message; an answer copied to the client; the client's own earlier question), the one whose
-- topic in the private chat it was written in (p_thread, client_topic) - else to the client's remembered choice
-- (client_route); with none, outcome `choose`: the caller holds the message and asks, once. The client's live
-- consultations are locked first, in id order, so the choice is made on rows no one changes meanwhile. A reply to a
-- consultation that is no longer live names nothing (the message goes where it would without the reply). A message
-- that names nothing while others are held and only one consultation is left waits behind them (`behind`).

create or replace function desk_admit(
  p_bot bigint, p_user bigint, p_chat bigint, p_message bigint, p_media_group text, p_reply_to bigint,
  p_type text, p_content jsonb, p_fast boolean, p_thread bigint, p_target bigint,
  out o_outcome text, out o_reason text, out o_consultation_id bigint, out o_item_id bigint,
  out o_open_appeal_id bigint, out o_last_appeal_number integer, out o_checked_at timestamptz,
  out o_state text, out o_starts_at timestamptz, out o_access_until timestamptz, out o_closed_at timestamptz,
  out o_slot_start timestamptz, out o_start_mode text, out o_needs_start_date boolean, out o_sla_minutes integer,
  out o_client_blocked_at timestamptz, out o_desk_row boolean, out o_wake boolean, out o_live integer)
language plpgsql as $fn$
declare
  c record;
  v_banned boolean;
  v_queued boolean;
  v_live bigint[];
  v_target bigint;
begin
  -- Already stored (a redelivered update): nothing to decide, and never held a second time.
  if exists (select 1 from desk_message m
             where m.bot_id = p_bot and m.chat_id = p_chat and m.message_id = p_message) then
    o_outcome := 'duplicate';
    return;
  end if;
  v_live := array(select cs.id from consultation cs
                   where cs.bot_id = p_bot and cs.user_id = p_user and cs.state = 'active'
                     and cs.revoked_at is null and cs.starts_at <= now() and now() < cs.access_until
                   order by cs.id
                   for update);
  o_live := cardinality(v_live);
  -- Messages held for a choice that is no longer there (one live consultation left: the other ended and its settle
  -- job has not delivered them yet, or its window has just passed and no ending has run): this one waits behind
  -- them (outcome `behind`: held, not asked), so the client's messages reach the topic in the order written.
  if p_target is null and o_live = 1
     and exists (select 1 from held_message h where h.bot_id = p_bot and h.user_id = p_user) then
    o_outcome := case when p_fast then 'retry' else 'behind' end;
    return;
  end if;
  v_target := p_target;
  if v_target is null and p_reply_to is not null then
    v_target := coalesce(
      (select r.consultation_id from consultation_client_message r
        where r.bot_id = p_bot and r.chat_id = p_chat and r.message_id = p_reply_to),
      (select m.consultation_id from desk_message m
        where m.bot_id = p_bot and m.mirror_chat_id = p_chat and m.mirror_message_id = p_reply_to
          and m.direction = 'out' limit 1),
      (select m.consultation_id from desk_message m
        where m.bot_id = p_bot and m.chat_id = p_chat and m.message_id = p_reply_to and m.state <> 'refused'));
    if not (v_target = any(v_live)) then v_target := null; end if;
  end if;
  if v_target is null and p_thread is not null then
    v_target := (select t.consultation_id from client_topic t
                  where t.bot_id = p_bot and t.user_id = p_user and t.thread_id = p_thread);
    if not (v_target = any(v_live)) then v_target := null; end if;
  end if;
  if v_target is null and o_live >= 2 then
    v_target := (select r.consultation_id from client_route r
                  where r.bot_id = p_bot and r.user_id = p_user and r.consultation_id = any(v_live));
    if v_target is null then
      o_outcome := case when p_fast then 'retry' else 'choose' end;
      return;
    end if;
  end if;

  -- The client's consultation, locked: every admission and every change of access takes this lock. Without a
  -- target (one live consultation or none), the one whose window holds now() wins, then the newest.
  select cs.id, cs.state, cs.starts_at, cs.access_until, cs.closed_at, cs.revoked_at,
         o.slot_start, o.start_mode, o.needs_start_date, o.sla_minutes
    into c
    from consultation cs join orders o on o.id = cs.order_id
    where cs.bot_id = p_bot and cs.user_id = p_user and (v_target is null or cs.id = v_target)
    order by (cs.state = 'active') desc,
      (cs.state = 'active' and cs.starts_at <= now() and now() < cs.access_until) desc,
      cs.created_at desc
    limit 1
    for update of cs;
  if not found then
    o_outcome := case when p_fast then 'retry' else 'none' end;
    return;
  end if;

  -- The database clock after the lock was granted (now() would be the transaction's start, before any lock wait);
  -- each statement below sees everything committed before it ran.
  o_checked_at := clock_timestamp();
  o_consultation_id := c.id;
  o_state := c.state;
  o_starts_at := c.starts_at;
  o_access_until := c.access_until;
  o_closed_at := c.closed_at;
  o_slot_start := c.slot_start;
  o_start_mode := c.start_mode;
  o_needs_start_date := c.needs_start_date;
  o_sla_minutes := c.sla_minutes;

  if exists (select 1 from desk_message m
             where m.bot_id = p_bot and m.chat_id = p_chat and m.message_id = p_message) then
    o_outcome := 'duplicate';
    return;
  end if;
  v_banned := coalesce((select cl.banned_at is not null from client cl
                        where cl.bot_id = p_bot and cl.user_id = p_user), false);
  o_open_appeal_id := (select a.id from desk_appeal a where a.consultation_id = c.id and a.state = 'open');
  select d.client_blocked_at, true, d.in_queued into o_client_blocked_at, o_desk_row, v_queued
    from desk_consultation d where d.consultation_id = c.id
    for update;
  o_desk_row := coalesce(o_desk_row, false);

  -- The access rule of seed 004: active, not revoked, starts_at <= checked_at < access_until; and not banned.
  o_reason := case
    when v_banned then 'banned'
    when c.state = 'revoked' or c.revoked_at is not null then 'refunded'
    when c.state = 'closed' then 'closed'
    when c.state <> 'active' or c.starts_at is null or c.access_until is null
         or o_checked_at < c.starts_at then 'not_started'
    when o_checked_at >= c.access_until then 'window_closed'
  end;
  if o_reason is not null then
    o_outcome := case when p_fast then 'retry' else 'refused' end;
    return;
  end if;

  if o_open_appeal_id is null or not o_desk_row or o_client_blocked_at is not null or (p_fast and not v_queued) then
    -- A new appeal (one unit of the ledger), the desk's first message, or a client back after blocking the bot:
    -- the caller finishes the admission under the same lock.
    o_last_appeal_number := (select max(a.number) from desk_appeal a where a.consultation_id = c.id);
    o_outcome := case when p_fast then 'retry' else 'open' end;
    return;
  end if;

  -- The common case: the message joins the open appeal.
  insert into desk_message (bot_id, consultation_id, direction, kind, chat_id, message_id, from_id, media_group_id,
                            reply_to_message_id, appeal_id, content_type, content, state, accepted_at)
    values (p_bot, c.id, 'in', 'copy', p_chat, p_message, p_user, p_media_group,
            p_reply_to, o_open_appeal_id, p_type, p_content, 'pending', o_checked_at)
    on conflict (bot_id, chat_id, message_id) do nothing
    returning id into o_item_id;
  if o_item_id is null then
    o_outcome := 'duplicate';
    return;
  end if;
  -- Wake the topic lane unless a job is already queued for it.
  o_wake := not v_queued;
  if o_wake then
    update desk_consultation set in_queued = true where consultation_id = c.id;
  end if;
  o_outcome := 'accepted';
end
$fn$;
