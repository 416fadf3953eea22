-- requires: ledger_settle_full
--
-- ledger_settle_one(request, to, actual, policy, note) -> (o_outcome, o_state, o_line, o_full): the entry point the
-- repository calls for every settle with at most one actual. A one-line commit or release of a hold still in state
-- reserved, by a move ledger_transition allows (the EXISTS below), comes back as one small json array ([account id,
-- amount, actual, charged, overrun, granted, reserved, used, holds]) instead of eight columns holding three arrays
-- and a jsonb list, each described, rendered and parsed per call. Anything else (a replay, a conflict, unknown ->
-- committed, a second commit, markUnknown, several lines) goes to ledger_settle_full in the same call; its row comes
-- back as o_full (jsonb), o_line null. Held equal to the full path by test/integration/ledger.fast.test.ts.

create or replace function ledger_settle_one(
  p_request_id text, p_to text, p_actual bigint, p_policy text, p_note text,
  out o_outcome text, out o_state text, out o_line json, out o_full jsonb)
language plpgsql as $fn$
declare
  v_id bigint;
  v_amount bigint;
  v_actual bigint;
  v_charged bigint;
  v_overrun boolean;
  v_key text;
  a record;
begin
  if p_to in ('committed', 'released') then
    -- As the full path: commit charges the actual (cap: at most the reservation, flagged as overrun), release
    -- charges nothing and clears actuals/charged. Only a hold still reserved, and only by a move the transition
    -- table allows, both re-checked after a lock wait; anything else goes to the full path below.
    update ledger_reservation t set state = p_to, prev_state = t.state,
        actuals = case when p_to = 'committed' then array[coalesce(p_actual, t.amounts[1])] end,
        charged = case when p_to = 'committed' then
          array[case when p_policy = 'cap' then least(coalesce(p_actual, t.amounts[1]), t.amounts[1])
                     else coalesce(p_actual, t.amounts[1]) end] end,
        overrun = p_to = 'committed' and coalesce(p_actual > t.amounts[1], false),
        settled_at = now(), note = coalesce(p_note, t.note)
      where t.request_id = p_request_id and t.state = 'reserved' and cardinality(t.amounts) = 1
        and exists (select from ledger_transition m where m.from_state = t.state and m.to_state = p_to)
      returning t.account_ids[1], t.amounts[1], t.actuals[1], t.charged[1], t.overrun, t.concurrency_key
      into v_id, v_amount, v_actual, v_charged, v_overrun, v_key;
    if found then
      update ledger_account acc
        set reserved = acc.reserved - v_amount, used = acc.used + coalesce(v_charged, 0), holds = acc.holds - 1
        where acc.id = v_id
        returning acc.granted, acc.reserved, acc.used, acc.holds into a;
      -- Into the account the hold was taken from, whatever period is current now.
      insert into ledger_journal (account_id, request_id, reason, d_reserved, d_used, note)
        values (v_id, p_request_id, case when p_to = 'committed' then 'commit' else 'release' end, -v_amount,
          coalesce(v_charged, 0), p_note);
      if v_key is not null then
        update ledger_slot s set active = s.active - 1 where s.key = v_key;
      end if;
      o_outcome := 'done';
      o_state := p_to;
      o_line := json_build_array(v_id, v_amount, v_actual, v_charged, v_overrun, a.granted, a.reserved, a.used,
        a.holds);
      return;
    end if;
  end if;
  -- A replay, a conflict, a move the table refuses, markUnknown, several lines: the full path, as given.
  select f.o_outcome, f.o_state, jsonb_build_object('prevState', f.o_prev_state, 'amounts', f.o_amounts,
      'actuals', f.o_actuals, 'charged', f.o_charged, 'overrun', f.o_overrun, 'accounts', f.o_accounts)
    into o_outcome, o_state, o_full
    from ledger_settle_full(p_request_id, p_to, case when p_actual is null then null else array[p_actual] end,
      p_policy, p_note) f;
end
$fn$;
