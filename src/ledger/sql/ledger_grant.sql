-- ledger_grant: gets or creates the account of a period and adds to it, once per request id (a replay returns the
-- first grant; the same id with other numbers is a conflict). With p_carry_cap, the unused balance of the latest
-- earlier period moves over, capped, once (journal reason rollover on both accounts).

create or replace function ledger_grant(
  p_request_id text, p_scope text, p_subject text, p_unit text, p_period_start timestamptz,
  p_period_end timestamptz, p_time_zone text, p_amount bigint, p_carry_cap bigint, p_fingerprint text,
  out o_outcome text, out o_account_id bigint, out o_amount bigint, out o_carried bigint,
  out o_carried_from bigint)
language plpgsql as $fn$
declare
  g record;
  v_acc record;
  v_prev record;
  v_prev_id bigint;
  v_carry bigint := 0;
begin
  select * into g from ledger_grant t where t.request_id = p_request_id;
  if found then
    o_outcome := case when g.fingerprint = p_fingerprint then 'replay' else 'conflict' end;
    o_account_id := g.account_id; o_amount := g.amount; o_carried := g.carried; o_carried_from := g.carried_from;
    return;
  end if;

  insert into ledger_account (scope, subject, unit, period_start, period_end, time_zone)
    values (p_scope, p_subject, p_unit, p_period_start, p_period_end, p_time_zone)
    on conflict (scope, subject, unit, period_start) do nothing;
  select acc.id, acc.period_end into v_acc from ledger_account acc
    where acc.scope = p_scope and acc.subject = p_subject and acc.unit = p_unit and acc.period_start = p_period_start;
  o_account_id := v_acc.id;
  if v_acc.period_end <> p_period_end then
    o_outcome := 'period_mismatch';
    return;
  end if;
  -- Carry-over (p_carry_cap not null) comes from the latest earlier period, once.
  if p_carry_cap is not null then
    v_prev_id := (select acc.id from ledger_account acc
      where acc.scope = p_scope and acc.subject = p_subject and acc.unit = p_unit
        and acc.period_start < p_period_start
      order by acc.period_start desc limit 1);
  end if;
  perform 1 from ledger_account acc where acc.id in (v_acc.id, v_prev_id) order by acc.id for update;
  if v_prev_id is not null then
    select acc.* into v_prev from ledger_account acc where acc.id = v_prev_id;
    if v_prev.rolled_over_to is null then
      v_carry := least(greatest(v_prev.granted - v_prev.reserved - v_prev.used, 0), p_carry_cap);
    else
      v_prev_id := null;
    end if;
  end if;

  insert into ledger_grant (request_id, account_id, amount, carried, carried_from, fingerprint)
    values (p_request_id, v_acc.id, p_amount, v_carry, v_prev_id, p_fingerprint)
    on conflict (request_id) do nothing;
  if not found then
    select * into g from ledger_grant t where t.request_id = p_request_id;
    o_outcome := case when g.fingerprint = p_fingerprint then 'replay' else 'conflict' end;
    o_account_id := g.account_id; o_amount := g.amount; o_carried := g.carried; o_carried_from := g.carried_from;
    return;
  end if;

  update ledger_account acc set granted = acc.granted + p_amount + v_carry where acc.id = v_acc.id;
  if p_amount <> 0 then
    insert into ledger_journal (account_id, request_id, reason, d_granted)
      values (v_acc.id, p_request_id, 'grant', p_amount);
  end if;
  if v_prev_id is not null then
    update ledger_account acc set granted = acc.granted - v_carry, rolled_over_to = v_acc.id
      where acc.id = v_prev_id;
    if v_carry <> 0 then
      insert into ledger_journal (account_id, request_id, reason, d_granted, note) values
        (v_prev_id, p_request_id, 'rollover', -v_carry, 'carried to account ' || v_acc.id),
        (v_acc.id, p_request_id, 'rollover', v_carry, 'carried from account ' || v_prev_id);
    end if;
  end if;
  o_outcome := 'new'; o_amount := p_amount; o_carried := v_carry; o_carried_from := v_prev_id;
end
$fn$;
