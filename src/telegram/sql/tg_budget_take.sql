-- tg_budget_take: one send's claim on Telegram's budgets, shared by every process (src/telegram/budget.ts calls it
-- once per attempt, before the call to Telegram).
-- Each key is a sliding window: at most p_limits[i] units in any p_windows[i] seconds (a copyMessages of n ids
-- weighs n). All keys or none: the send is recorded against every key only when each has room and none is blocked
-- by a 429's retry_after. The key rows are locked in key order, so concurrent takes of one key queue here.
-- p_fair_key (a staff group's key) adds the waiting room: a send there is granted only to the best waiter - lowest
-- priority number first, then the lane served longest ago (round robin across consultations), then the longest
-- waiting. Waiters that stopped asking (no take for p_stale seconds: a dead process, a lane that gave up its turn)
-- are passed over.
-- Returns 0 when granted (and recorded); > 0: seconds until the budget has room; -1: room, but another lane's turn.
-- p_token marks the recorded rows: once Telegram has answered, the caller moves them to that instant
-- (tg_budget_settle), so a send holds its windows from its answer on, not for a margin guessed at the grant.

create or replace function tg_budget_take(
  p_keys text[], p_limits integer[], p_windows double precision[], p_weights integer[],
  p_fair_key text, p_lane text, p_priority integer, p_stale double precision, p_token uuid default null)
returns double precision
language plpgsql as $$
declare
  v_now timestamptz;
  v_wait double precision := 0;
  v_w double precision;
  v_sum integer;
  v_need integer;
  v_best text;
  v_i integer;
begin
  insert into tg_budget (key) select k from unnest(p_keys) as k order by k on conflict do nothing;
  perform 1 from tg_budget where key = any (p_keys) order by key for update;
  v_now := clock_timestamp();
  if p_fair_key is not null then
    insert into tg_budget_waiter as w (key, lane, priority, waiting, since, seen_at)
      values (p_fair_key, p_lane, p_priority, true, v_now, v_now)
      on conflict (key, lane) do update
        set priority = excluded.priority, seen_at = v_now, waiting = true,
            since = case when w.waiting then w.since else v_now end;
  end if;
  for v_i in 1 .. cardinality(p_keys) loop
    select case when b.blocked_until > v_now then extract(epoch from b.blocked_until - v_now) else 0 end into v_w
      from tg_budget b where b.key = p_keys[v_i];
    v_wait := greatest(v_wait, coalesce(v_w, 0));
    delete from tg_budget_send s
      where s.key = p_keys[v_i] and s.at <= v_now - make_interval(secs => p_windows[v_i]);
    select coalesce(sum(s.n), 0) into v_sum from tg_budget_send s where s.key = p_keys[v_i];
    v_need := v_sum + least(p_weights[v_i], p_limits[v_i]) - p_limits[v_i];
    if v_need > 0 then
      -- The window has room once the oldest sends worth v_need units have left it.
      select extract(epoch from x.at - v_now) + p_windows[v_i] into v_w
        from (select s.at, sum(s.n) over (order by s.at rows unbounded preceding) as c
                from tg_budget_send s where s.key = p_keys[v_i]) x
        where x.c >= v_need order by x.at limit 1;
      v_wait := greatest(v_wait, coalesce(v_w, p_windows[v_i]), 0.001);
    end if;
  end loop;
  if v_wait > 0 then
    return v_wait;
  end if;
  if p_fair_key is not null then
    select w.lane into v_best from tg_budget_waiter w
      where w.key = p_fair_key and w.waiting and w.seen_at > v_now - make_interval(secs => p_stale)
      order by w.priority, w.served_at nulls first, w.since, w.lane
      limit 1;
    if v_best is distinct from p_lane then
      return -1;
    end if;
    update tg_budget_waiter w set waiting = false, served_at = v_now where w.key = p_fair_key and w.lane = p_lane;
    -- Lanes long gone leave their rows: cleared now and then.
    if random() < 0.01 then
      delete from tg_budget_waiter w
        where w.key = p_fair_key and not w.waiting and w.served_at < v_now - interval '1 hour';
    end if;
  end if;
  -- Windows of keys nobody sends to any more (a private chat long quiet) are cleared now and then: no window is
  -- longer than a minute or so.
  if random() < 0.001 then
    delete from tg_budget_send s where s.at < v_now - interval '1 hour';
  end if;
  insert into tg_budget_send (key, at, n, token)
    select k, v_now, least(w, l), p_token from unnest(p_keys, p_weights, p_limits) as t (k, w, l);
  return 0;
end $$;
