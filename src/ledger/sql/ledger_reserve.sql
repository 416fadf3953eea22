-- requires: ledger_reserve_full
--
-- ledger_reserve: the entry point for arrays of lines (src/ledger/ledger.repository.ts; pre_checkout_hold). A
-- one-line reservation without a concurrency limit (a client's appeal, a capacity place) is a conditional UPDATE of
-- the account (active, period holds the instant, enough available) that locks the row and returns the numbers it
-- decided on, then the reservation row (its decision built from those numbers exactly as the full path stores it)
-- and its journal row. Anything else - a refusal, whose reason and numbers the full path reads under the lock,
-- several lines, a concurrency slot, a request id already used - goes to ledger_reserve_full in the same call.
--
-- Why a fast path: the full function locks with SELECT ... FOR UPDATE and writes in further statements (a row
-- locked and then updated is written twice), and each statement in a PL/pgSQL function costs an executor start-up,
-- which is most of the work for one row. Plain statements also measured cheaper than one data-modifying CTE doing
-- the same. Lock order, decisions, stored numbers and journal rows are the full path's; test/integration/
-- ledger.fast.test.ts runs both paths over every rule and compares answers and rows.

create or replace function ledger_reserve(
  p_request_id text, p_account_ids bigint[], p_scopes text[], p_subjects text[], p_units text[], p_amounts bigint[],
  p_at timestamptz, p_concurrency_key text, p_concurrency_max integer, p_ttl_seconds double precision,
  p_fingerprint text, p_line_ats timestamptz[] default null,
  out o_outcome text, out o_state text, out o_decision jsonb, out o_expires_at timestamptz)
language plpgsql as $fn$
declare
  v_at timestamptz;
  v_id bigint;
  v_amount bigint;
  a record;
begin
  if cardinality(p_amounts) = 1 and p_concurrency_key is null then
    v_at := coalesce(p_line_ats[1], p_at, now());
    v_id := p_account_ids[1];
    v_amount := p_amounts[1];
    if v_id is null then
      v_id := (select acc.id from ledger_account acc
        where acc.scope = p_scopes[1] and acc.subject = p_subjects[1] and acc.unit = p_units[1]
          and acc.period_start <= v_at and acc.period_end > v_at
        order by acc.period_start desc limit 1);
    end if;
    -- The conditional UPDATE locks the row and decides on its latest committed version (re-checked after a lock
    -- wait); what it returns are the numbers of that decision, after the hold.
    update ledger_account acc set reserved = acc.reserved + v_amount, holds = acc.holds + 1
      where acc.id = v_id and acc.active and acc.period_start <= v_at and acc.period_end > v_at
        and acc.granted - acc.reserved - acc.used >= v_amount
      returning acc.scope, acc.subject, acc.unit, acc.granted, acc.reserved, acc.used, acc.holds, acc.period_start,
        acc.period_end, acc.time_zone into a;
    if found then
      -- The full path's decision for an admission: the numbers as read, before this hold; reason null.
      o_decision := jsonb_build_object('reason', null, 'line', null, 'concurrency', null, 'lines', jsonb_build_array(
          jsonb_build_object('accountId', v_id, 'scope', a.scope, 'subject', a.subject, 'unit', a.unit,
            'amount', v_amount, 'granted', a.granted, 'reserved', a.reserved - v_amount, 'used', a.used,
            'holds', a.holds - 1, 'periodStart', a.period_start, 'periodEnd', a.period_end,
            'timeZone', a.time_zone)));
      o_expires_at := now() + make_interval(secs => p_ttl_seconds);
      insert into ledger_reservation (request_id, state, account_ids, amounts, fingerprint, decision, expires_at)
        values (p_request_id, 'reserved', array[v_id], p_amounts, p_fingerprint, o_decision, o_expires_at)
        on conflict (request_id) do nothing;
      if found then
        insert into ledger_journal (account_id, request_id, reason, d_reserved)
          values (v_id, p_request_id, 'reserve', v_amount);
        o_outcome := 'new';
        o_state := 'reserved';
        return;
      end if;
      -- The request id is taken (a replay, or a concurrent call with it committed first): undo the hold, which no
      -- other transaction saw (the row stays locked), and let the full path return the stored decision.
      update ledger_account acc set reserved = acc.reserved - v_amount, holds = acc.holds - 1 where acc.id = v_id;
    end if;
  end if;
  -- A refusal (reason and numbers read under the lock), several lines, a concurrency slot, a taken request id.
  select f.o_outcome, f.o_state, f.o_decision, f.o_expires_at into o_outcome, o_state, o_decision, o_expires_at
    from ledger_reserve_full(p_request_id, p_account_ids, p_scopes, p_subjects, p_units, p_amounts, p_at,
      p_concurrency_key, p_concurrency_max, p_ttl_seconds, p_fingerprint, p_line_ats) f;
end
$fn$;
