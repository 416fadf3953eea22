-- ledger_expire_due: the sweeper's step. Expires up to p_limit holds still in state reserved past their deadline,
-- each with a journal row, and returns their request ids; a hold whose outcome is unknown is never expired.
-- SKIP LOCKED: two sweepers take disjoint batches, and a hold being settled right now is left to its settler.

create or replace function ledger_expire_due(p_limit integer, p_note text) returns setof text
language plpgsql as $fn$
declare
  v_ids text[];
begin
  -- SKIP LOCKED: two sweepers take disjoint batches, and a hold being settled right now is left to its settler.
  -- Only state reserved: a hold whose outcome is unknown is never expired automatically.
  select array_agg(t.request_id) into v_ids from (
    select r.request_id from ledger_reservation r
    where r.state = 'reserved' and r.expires_at <= now()
    order by r.expires_at limit p_limit
    for update skip locked) t;
  if v_ids is null then
    return;
  end if;
  if not exists (select 1 from ledger_transition t where t.from_state = 'reserved' and t.to_state = 'expired') then
    return;
  end if;
  perform 1 from ledger_account acc
    where acc.id in (select unnest(r.account_ids) from ledger_reservation r where r.request_id = any(v_ids))
    order by acc.id for update;
  perform 1 from ledger_slot s
    where s.key in (select r.concurrency_key from ledger_reservation r where r.request_id = any(v_ids))
    order by s.key for update;
  update ledger_account acc set reserved = acc.reserved - p.amount, holds = acc.holds - p.n
    from (select x.id, sum(x.amount) as amount, count(*) as n
          from ledger_reservation r, unnest(r.account_ids, r.amounts) x(id, amount)
          where r.request_id = any(v_ids) group by x.id) p
    where acc.id = p.id;
  insert into ledger_journal (account_id, request_id, reason, d_reserved, note)
    select x.id, r.request_id, 'expire', -x.amount, p_note
    from ledger_reservation r, unnest(r.account_ids, r.amounts) x(id, amount)
    where r.request_id = any(v_ids);
  update ledger_slot s set active = s.active - p.n
    from (select r.concurrency_key as key, count(*) as n from ledger_reservation r
          where r.request_id = any(v_ids) and r.concurrency_key is not null group by 1) p
    where s.key = p.key;
  update ledger_reservation t set state = 'expired', prev_state = 'reserved', settled_at = now(), note = p_note
    where t.request_id = any(v_ids);
  return query select unnest(v_ids);
end
$fn$;
