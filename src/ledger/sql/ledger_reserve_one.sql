-- requires: ledger_reserve_full
--
-- ledger_reserve_one(request, account id | key, amount, instant, ttl, fingerprint) -> the row of ledger_reserve:
-- the entry point the repository calls for every one-line reservation without a concurrency limit (a client's
-- appeal, a capacity place, a benchmark cycle). The same admission as ledger_reserve's fast path (same conditional
-- UPDATE, rows, stored decision, journal row, lock order); what differs is the framing, which on a one-row operation
-- costs as much as the work: scalars in instead of seven arrays, each parsed by the server per call. Anything else
-- (a refusal, a replay, a conflict) goes to the unchanged full function in the same call, whose row comes back as is.
--
-- Why it repeats ledger_reserve's fast path instead of calling it with one-element arrays: tried as such a
-- wrapper, the benchmark's 10,000-account ratio fell from 0.88-0.90 to 0.81-0.87 (five runs, interleaved with the
-- copy, one machine): one more function call and its array arguments per admission. Change a rule in both, or
-- test/integration/ledger.fast.test.ts fails.

create or replace function ledger_reserve_one(
  p_request_id text, p_account_id bigint, p_scope text, p_subject text, p_unit text, p_amount bigint,
  p_at timestamptz, p_ttl_seconds double precision, p_fingerprint text,
  out o_outcome text, out o_state text, out o_decision jsonb, out o_expires_at timestamptz)
language plpgsql as $fn$
declare
  v_at timestamptz := coalesce(p_at, now());
  v_id bigint := p_account_id;
  a record;
begin
  if v_id is null then
    v_id := (select acc.id from ledger_account acc
      where acc.scope = p_scope and acc.subject = p_subject and acc.unit = p_unit
        and acc.period_start <= v_at and acc.period_end > v_at
      order by acc.period_start desc limit 1);
  end if;
  -- The conditional UPDATE locks the row and decides on its latest committed version (re-checked after a lock
  -- wait); it returns the numbers of that decision as read, before this hold.
  update ledger_account acc set reserved = acc.reserved + p_amount, holds = acc.holds + 1
    where acc.id = v_id and acc.active and acc.period_start <= v_at and acc.period_end > v_at
      and acc.granted - acc.reserved - acc.used >= p_amount
    returning acc.scope, acc.subject, acc.unit, acc.granted, acc.reserved, acc.used, acc.holds, acc.period_start,
      acc.period_end, acc.time_zone into a;
  if found then
    o_expires_at := now() + make_interval(secs => p_ttl_seconds);
    o_decision := jsonb_build_object('reason', null, 'line', null, 'concurrency', null, 'lines', jsonb_build_array(
        jsonb_build_object('accountId', v_id, 'scope', a.scope, 'subject', a.subject, 'unit', a.unit,
          'amount', p_amount, 'granted', a.granted, 'reserved', a.reserved - p_amount, 'used', a.used,
          'holds', a.holds - 1, 'periodStart', a.period_start, 'periodEnd', a.period_end, 'timeZone', a.time_zone)));
    insert into ledger_reservation (request_id, state, account_ids, amounts, fingerprint, decision, expires_at)
      values (p_request_id, 'reserved', array[v_id], array[p_amount], p_fingerprint, o_decision, o_expires_at)
      on conflict (request_id) do nothing;
    if found then
      insert into ledger_journal (account_id, request_id, reason, d_reserved)
        values (v_id, p_request_id, 'reserve', p_amount);
      o_outcome := 'new';
      o_state := 'reserved';
      return;
    end if;
    -- The request id is taken (a replay, or a concurrent call with it committed first): undo the hold, which no
    -- other transaction saw (the row stays locked), and let the full path return the stored decision.
    update ledger_account acc set reserved = acc.reserved - p_amount, holds = acc.holds - 1 where acc.id = v_id;
  end if;
  -- A refusal (reason and numbers read under the lock), a taken request id: the full path, as given.
  select f.o_outcome, f.o_state, f.o_decision, f.o_expires_at into o_outcome, o_state, o_decision, o_expires_at
    from ledger_reserve_full(p_request_id, array[p_account_id], array[p_scope], array[p_subject], array[p_unit],
      array[p_amount], p_at, null, null, p_ttl_seconds, p_fingerprint) f;
end
$fn$;
