-- requires: ledger_settle_full
--
-- ledger_settle: committing or releasing a one-line reservation is a conditional UPDATE of the reservation (allowed
-- by ledger_transition from its current state, re-checked after a lock wait) that locks it and returns what it
-- held, then the account, the journal row, and the concurrency slot only when the hold had one. Anything else - a
-- replay, a conflict, an invalid move, markUnknown, several lines, actuals that do not match the lines - goes to
-- ledger_settle_full in the same call. Why a fast path: see ledger_reserve.sql.

create or replace function ledger_settle(
  p_request_id text, p_to text, p_actuals bigint[], p_policy text, p_note text,
  out o_outcome text, out o_state text, out o_prev_state text, out o_amounts bigint[], out o_actuals bigint[],
  out o_charged bigint[], out o_overrun boolean, out o_accounts jsonb)
language plpgsql as $fn$
declare
  v_id bigint;
  v_amount bigint;
  v_charged bigint;
  v_key text;
  a record;
begin
  if p_to in ('committed', 'released') and coalesce(cardinality(p_actuals), 1) = 1 then
    -- As the full path: commit charges the actual (cap: at most the reservation, flagged as overrun), release
    -- charges nothing and clears actuals/charged. The WHERE is the transition table, re-checked after a lock wait.
    update ledger_reservation t set state = p_to, prev_state = t.state,
        actuals = case when p_to = 'committed' then coalesce(p_actuals, t.amounts) end,
        charged = case when p_to = 'committed' then
          case when p_policy = 'cap' and p_actuals[1] > t.amounts[1] then t.amounts
               else coalesce(p_actuals, t.amounts) end end,
        overrun = p_to = 'committed' and coalesce(p_actuals[1] > t.amounts[1], false),
        settled_at = now(), note = coalesce(p_note, t.note)
      where t.request_id = p_request_id and cardinality(t.amounts) = 1
        and exists (select from ledger_transition m where m.from_state = t.state and m.to_state = p_to)
      returning t.account_ids[1], t.amounts[1], coalesce(t.charged[1], 0), t.prev_state, t.concurrency_key,
        t.amounts, t.actuals, t.charged, t.overrun
      into v_id, v_amount, v_charged, o_prev_state, v_key, o_amounts, o_actuals, o_charged, o_overrun;
    if found then
      update ledger_account acc
        set reserved = acc.reserved - v_amount, used = acc.used + v_charged, holds = acc.holds - 1
        where acc.id = v_id
        returning acc.granted, acc.reserved, acc.used, acc.holds into a;
      -- Into the account the hold was taken from, whatever period is current now.
      if found then
        insert into ledger_journal (account_id, request_id, reason, d_reserved, d_used, note)
          values (v_id, p_request_id, case when p_to = 'committed' then 'commit' else 'release' end, -v_amount,
            v_charged, p_note);
        o_accounts := jsonb_build_array(jsonb_build_object('accountId', v_id, 'granted', a.granted,
          'reserved', a.reserved, 'used', a.used, 'holds', a.holds));
      end if;
      -- Only a hold still running occupied a concurrency slot (unknown gave it back already).
      if o_prev_state = 'reserved' and v_key is not null then
        update ledger_slot s set active = s.active - 1 where s.key = v_key;
      end if;
      o_outcome := 'done';
      o_state := p_to;
      return;
    end if;
  end if;
  -- A replay, a conflict, an invalid move, markUnknown, several lines, actuals that do not match the lines.
  select f.o_outcome, f.o_state, f.o_prev_state, f.o_amounts, f.o_actuals, f.o_charged, f.o_overrun, f.o_accounts
    into o_outcome, o_state, o_prev_state, o_amounts, o_actuals, o_charged, o_overrun, o_accounts
    from ledger_settle_full(p_request_id, p_to, p_actuals, p_policy, p_note) f;
end
$fn$;
