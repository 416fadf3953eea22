-- ledger_settle_full: commit, release or mark unknown a reservation of any number of lines (the full path behind
-- ledger_settle and ledger_settle_one). Settling again is a no-op; committing again with another actual is a
-- conflict for review; a move not in ledger_transition is refused. Commit charges the actual (policy cap: at most the
-- reservation, flagged as overrun); the hold goes into the accounts it was taken from, whatever period is current.
-- Lock order and the reasons for PL/pgSQL: see ledger_reserve_full.sql.

create or replace function ledger_settle_full(
  p_request_id text, p_to text, p_actuals bigint[], p_policy text, p_note text,
  out o_outcome text, out o_state text, out o_prev_state text, out o_amounts bigint[], out o_actuals bigint[],
  out o_charged bigint[], out o_overrun boolean, out o_accounts jsonb)
language plpgsql as $fn$
declare
  r record;
  v_actuals bigint[];
  v_charged bigint[];
  v_overrun boolean;
begin
  select t.state, t.prev_state, t.account_ids, t.amounts, t.actuals, t.charged, t.overrun, t.concurrency_key,
      exists (select 1 from ledger_transition m where m.from_state = t.state and m.to_state = p_to) as allowed
    into r from ledger_reservation t where t.request_id = p_request_id for update of t;
  if not found then
    o_outcome := 'not_found';
    return;
  end if;
  o_state := r.state; o_prev_state := r.prev_state; o_amounts := r.amounts; o_actuals := r.actuals;
  o_charged := r.charged; o_overrun := r.overrun;
  if p_to = 'committed' then
    v_actuals := coalesce(p_actuals, r.amounts);
  end if;

  -- Settling again is a no-op; committing again with another actual is a conflict for review.
  if r.state = p_to then
    o_outcome := case when p_to = 'committed' and r.actuals is distinct from v_actuals then 'conflict'
                      else 'replay' end;
    return;
  end if;
  if not r.allowed then
    o_outcome := 'invalid_transition';
    return;
  end if;
  if p_to = 'committed' and cardinality(v_actuals) <> cardinality(r.amounts) then
    o_outcome := 'lines_mismatch';
    return;
  end if;

  if p_to = 'unknown' then
    -- The hold stays (it may have been spent) but the request no longer counts as running.
    update ledger_reservation t set state = 'unknown', prev_state = r.state, note = coalesce(p_note, t.note)
      where t.request_id = p_request_id;
  else
    if p_to = 'committed' then
      -- cap: charge at most the reserved amount and flag the overrun; allow: charge the actual. Both keep the actual.
      if cardinality(r.amounts) = 1 then
        v_overrun := v_actuals[1] > r.amounts[1];
        v_charged := case when p_policy = 'cap' and v_overrun then r.amounts else v_actuals end;
      else
        v_overrun := exists (select 1 from unnest(v_actuals, r.amounts) x(actual, amount) where x.actual > x.amount);
        v_charged := case when p_policy = 'cap'
          then array(select least(x.actual, x.amount) from unnest(v_actuals, r.amounts) with ordinality
                       x(actual, amount, ord) order by x.ord)
          else v_actuals end;
      end if;
    else
      v_overrun := false;
      v_charged := array_fill(0::bigint, array[cardinality(r.amounts)]);
    end if;
    o_actuals := v_actuals;
    o_charged := case when p_to = 'committed' then v_charged end;
    o_overrun := v_overrun;

    -- Into the accounts the hold was taken from, whatever period is current now.
    if cardinality(r.amounts) = 1 then
      with res as (
        update ledger_reservation t set state = p_to, prev_state = r.state, actuals = v_actuals,
          charged = o_charged, overrun = v_overrun, settled_at = now(), note = coalesce(p_note, t.note)
        where t.request_id = p_request_id),
      acc as (
        update ledger_account acc
          set reserved = acc.reserved - r.amounts[1], used = acc.used + v_charged[1], holds = acc.holds - 1
          where acc.id = r.account_ids[1]
          returning acc.id, acc.granted, acc.reserved, acc.used, acc.holds),
      j as (
        insert into ledger_journal (account_id, request_id, reason, d_reserved, d_used, note)
        select acc.id, p_request_id, case when p_to = 'committed' then 'commit' else 'release' end,
          -r.amounts[1], v_charged[1], p_note
        from acc)
      select jsonb_build_array(jsonb_build_object('accountId', acc.id, 'granted', acc.granted,
          'reserved', acc.reserved, 'used', acc.used, 'holds', acc.holds))
        into o_accounts from acc;
    else
      perform 1 from ledger_account acc where acc.id = any(r.account_ids) order by acc.id for update;
      update ledger_reservation t set state = p_to, prev_state = r.state, actuals = v_actuals,
          charged = o_charged, overrun = v_overrun, settled_at = now(), note = coalesce(p_note, t.note)
        where t.request_id = p_request_id;
      with acc as (
        update ledger_account acc
          set reserved = acc.reserved - x.amount, used = acc.used + x.charged, holds = acc.holds - 1
          from unnest(r.account_ids, r.amounts, v_charged) x(id, amount, charged)
          where acc.id = x.id
          returning acc.id, acc.granted, acc.reserved, acc.used, acc.holds, x.amount, x.charged),
      j as (
        insert into ledger_journal (account_id, request_id, reason, d_reserved, d_used, note)
        select acc.id, p_request_id, case when p_to = 'committed' then 'commit' else 'release' end, -acc.amount,
          acc.charged, p_note
        from acc)
      select jsonb_agg(jsonb_build_object('accountId', acc.id, 'granted', acc.granted, 'reserved', acc.reserved,
          'used', acc.used, 'holds', acc.holds) order by acc.id) into o_accounts from acc;
    end if;
  end if;
  if r.state = 'reserved' and r.concurrency_key is not null then
    update ledger_slot s set active = s.active - 1 where s.key = r.concurrency_key;
  end if;
  o_outcome := 'done';
  o_prev_state := r.state;
  o_state := p_to;
end
$fn$;
