import { type Kysely, sql } from 'kysely'

/**
 * The quota ledger: accounts per (scope, subject, unit, period), reservations (one row per admission attempt, keyed
 * by the caller's request id), the journal of every counter change, idempotent grants, and concurrency slots.
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table ledger_account (
      id bigint generated always as identity primary key,
      scope text not null,
      subject text not null,
      unit text not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      time_zone text not null default 'UTC',
      granted bigint not null default 0,
      reserved bigint not null default 0,
      used bigint not null default 0,
      holds integer not null default 0,
      active boolean not null default true,
      rolled_over_to bigint references ledger_account (id),
      created_at timestamptz not null default now(),
      constraint ledger_account_key unique (scope, subject, unit, period_start),
      -- One CHECK, not five: PostgreSQL re-reads every CHECK expression at the start of each statement that
      -- writes the row, and accounts are written twice per admission.
      constraint ledger_account_sane
        check (period_end > period_start and granted >= 0 and reserved >= 0 and used >= 0 and holds >= 0)
    ) with (fillfactor = 80)
  `.execute(db)

  // Refused decisions are stored too (state 'refused'), so a replay returns the same numbers.
  await sql`
    create table ledger_reservation (
      request_id text primary key,
      state text not null,
      account_ids bigint[] not null,
      amounts bigint[] not null,
      actuals bigint[],
      charged bigint[],
      overrun boolean not null default false,
      concurrency_key text,
      fingerprint text not null,
      decision jsonb not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      settled_at timestamptz,
      note text,
      prev_state text,
      -- One CHECK (see ledger_account_sane). The first two states are written without a move; every later state
      -- records the state it came from.
      constraint ledger_reservation_sane check (
        state in ('reserved', 'committed', 'released', 'expired', 'unknown', 'refused')
        and (prev_state is null) = (state in ('reserved', 'refused'))
        and cardinality(account_ids) = cardinality(amounts)
        and length(request_id) between 1 and 200)
    )
  `.execute(db)
  // The sweeper's scan: only holds still in state reserved, oldest deadline first.
  await sql`create index ledger_reservation_due on ledger_reservation (expires_at) where state = 'reserved'`.execute(
    db,
  )
  // Holds awaiting reconciliation (outcome unknown), for a person or a reconciliation job.
  await sql`create index ledger_reservation_unknown on ledger_reservation (created_at) where state = 'unknown'`.execute(
    db,
  )

  await sql`
    create table ledger_journal (
      id bigint generated always as identity primary key,
      account_id bigint not null references ledger_account (id),
      request_id text,
      reason text not null,
      d_granted bigint not null default 0,
      d_reserved bigint not null default 0,
      d_used bigint not null default 0,
      note text,
      created_at timestamptz not null default now(),
      constraint ledger_journal_reason
        check (reason in ('grant', 'reserve', 'commit', 'release', 'expire', 'adjust', 'rollover'))
    )
  `.execute(db)
  await sql`create index ledger_journal_account on ledger_journal (account_id)`.execute(db)

  await sql`
    create table ledger_grant (
      request_id text primary key,
      account_id bigint not null references ledger_account (id),
      amount bigint not null,
      carried bigint not null default 0,
      carried_from bigint references ledger_account (id),
      fingerprint text not null,
      created_at timestamptz not null default now(),
      constraint ledger_grant_amount check (amount >= 0),
      constraint ledger_grant_carried check (carried >= 0)
    )
  `.execute(db)

  await sql`
    create table ledger_slot (
      key text primary key,
      active integer not null default 0,
      constraint ledger_slot_active check (active >= 0)
    ) with (fillfactor = 80)
  `.execute(db)

  await sql`
    create table ledger_transition (
      from_state text not null,
      to_state text not null,
      primary key (from_state, to_state)
    )
  `.execute(db)
  await db
    .insertInto('ledger_transition')
    .values(TRANSITIONS.map(([from_state, to_state]) => ({ from_state, to_state })))
    .execute()

  for (const f of FUNCTIONS) await f.execute(db)
}

/**
 * The allowed moves of a reservation, the one table every settling function checks before it writes. Read without a
 * lock (a foreign key to it would take FOR KEY SHARE on these few rows from every commit: a contention hot spot).
 */
const TRANSITIONS: [string, string][] = [
  ['reserved', 'committed'],
  ['reserved', 'released'],
  ['reserved', 'expired'],
  ['reserved', 'unknown'],
  ['unknown', 'committed'],
  ['unknown', 'released'],
]

/*
 * The operations are PL/pgSQL functions so that each is one round trip with plans cached per connection (a CTE
 * statement of the same logic is re-planned on every call: ~0.4 ms, more than the work itself) and so that each
 * statement inside sees a fresh READ COMMITTED snapshot after the locks it waited for. Lock order everywhere:
 * reservation rows, then accounts by id, then concurrency slots by key; so operations never deadlock each other.
 * A refusal is a returned value, never an exception: they can run inside a caller's transaction without aborting it.
 */
const FUNCTIONS = [
  sql`
create function ledger_reserve(
  p_request_id text, p_account_ids bigint[], p_scopes text[], p_subjects text[], p_units text[], p_amounts bigint[],
  p_at timestamptz, p_concurrency_key text, p_concurrency_max integer, p_ttl_seconds double precision,
  p_fingerprint text,
  out o_outcome text, out o_state text, out o_decision jsonb, out o_expires_at timestamptz)
language plpgsql as $fn$
declare
  v_at timestamptz := coalesce(p_at, now());
  v_n integer := coalesce(cardinality(p_amounts), 0);
  v_ids bigint[] := p_account_ids;
  v_lines jsonb := '[]'::jsonb;
  v_reason text;
  v_line integer;
  v_active integer;
  v_conc jsonb;
  v_found boolean;
  v_rows bigint;
  a record;
  i integer;
begin
  -- Lines given by key resolve to the account whose period contains the instant; the reservation is pinned to it.
  for i in 1 .. v_n loop
    if v_ids[i] is null then
      v_ids[i] := (select acc.id from ledger_account acc
        where acc.scope = p_scopes[i] and acc.subject = p_subjects[i] and acc.unit = p_units[i]
          and acc.period_start <= v_at and acc.period_end > v_at
        order by acc.period_start desc limit 1);
    end if;
  end loop;
  if v_n > 1 then
    if (select count(distinct x) <> count(x) from unnest(v_ids) x) then
      o_outcome := 'duplicate_account';
      return;
    end if;
    -- Several accounts: lock them in id order first (deadlock-free against every other ledger operation).
    perform 1 from ledger_account acc where acc.id = any(v_ids) order by acc.id for update;
  end if;

  -- Each account is read under its row lock: the latest committed numbers, unchangeable until this transaction
  -- ends. The decision below and the update after it use these same numbers.
  for i in 1 .. v_n loop
    v_found := false;
    if v_ids[i] is not null then
      select acc.* into a from ledger_account acc where acc.id = v_ids[i] for update;
      v_found := found;
    end if;
    if not v_found then
      v_lines := v_lines || jsonb_build_array(jsonb_build_object('accountId', null, 'scope', p_scopes[i],
        'subject', p_subjects[i], 'unit', p_units[i], 'amount', p_amounts[i]));
      if v_reason is null then v_reason := 'no_account'; v_line := i - 1; end if;
      continue;
    end if;
    if v_reason is null then
      if not a.active or v_at < a.period_start or v_at >= a.period_end then
        v_reason := 'inactive'; v_line := i - 1;
      elsif a.granted - a.reserved - a.used < p_amounts[i] then
        v_reason := case when a.reserved > 0 and a.granted - a.used >= p_amounts[i] then 'held_by_active'
                         else 'exhausted' end;
        v_line := i - 1;
      end if;
    end if;
    -- Numbers as read, before this reservation; the service adds the amount for an admission.
    v_lines := v_lines || jsonb_build_array(jsonb_build_object('accountId', a.id, 'scope', a.scope,
      'subject', a.subject, 'unit', a.unit, 'amount', p_amounts[i], 'granted', a.granted, 'reserved', a.reserved,
      'used', a.used, 'holds', a.holds, 'periodStart', a.period_start, 'periodEnd', a.period_end,
      'timeZone', a.time_zone));
  end loop;

  -- The concurrency limit counts reservations in state reserved under the key; the counter row is locked, so two
  -- simultaneous requests cannot both see a free slot.
  if v_reason is null and p_concurrency_key is not null then
    insert into ledger_slot (key) values (p_concurrency_key) on conflict do nothing;
    select s.active into v_active from ledger_slot s where s.key = p_concurrency_key for update;
    v_conc := jsonb_build_object('key', p_concurrency_key, 'active', v_active, 'max', p_concurrency_max);
    if v_active >= p_concurrency_max then v_reason := 'over_concurrency'; end if;
  end if;

  o_state := case when v_reason is null then 'reserved' else 'refused' end;
  o_decision := jsonb_build_object('reason', v_reason, 'line', v_line, 'lines', v_lines, 'concurrency', v_conc);
  o_expires_at := case when v_reason is null then now() + make_interval(secs => p_ttl_seconds) end;

  -- The reservation row is written first and gates the rest: if the request id exists (a replay, or a concurrent
  -- call with the same id that committed first), nothing else is written and the stored decision is returned.
  if v_reason is not null then
    insert into ledger_reservation (request_id, state, account_ids, amounts, concurrency_key, fingerprint, decision)
      values (p_request_id, o_state, v_ids, p_amounts, p_concurrency_key, p_fingerprint, o_decision)
      on conflict (request_id) do nothing;
    get diagnostics v_rows = row_count;
  elsif v_n = 1 then
    -- One line (the common case): one statement with scalar parameters, whose cached plan is plain index access.
    with ins as (
      insert into ledger_reservation
        (request_id, state, account_ids, amounts, concurrency_key, fingerprint, decision, expires_at)
      values
        (p_request_id, o_state, v_ids, p_amounts, p_concurrency_key, p_fingerprint, o_decision, o_expires_at)
      on conflict (request_id) do nothing
      returning 1),
    acc as (
      update ledger_account acc set reserved = acc.reserved + p_amounts[1], holds = acc.holds + 1
      where acc.id = v_ids[1] and exists (select 1 from ins)
      returning acc.id)
    insert into ledger_journal (account_id, request_id, reason, d_reserved)
      select acc.id, p_request_id, 'reserve', p_amounts[1] from acc;
    get diagnostics v_rows = row_count;
  else
    insert into ledger_reservation
      (request_id, state, account_ids, amounts, concurrency_key, fingerprint, decision, expires_at)
    values
      (p_request_id, o_state, v_ids, p_amounts, p_concurrency_key, p_fingerprint, o_decision, o_expires_at)
    on conflict (request_id) do nothing;
    get diagnostics v_rows = row_count;
    if v_rows > 0 then
      with acc as (
        update ledger_account acc set reserved = acc.reserved + x.amount, holds = acc.holds + 1
        from unnest(v_ids, p_amounts) x(id, amount) where acc.id = x.id
        returning acc.id, x.amount)
      insert into ledger_journal (account_id, request_id, reason, d_reserved)
        select acc.id, p_request_id, 'reserve', acc.amount from acc;
    end if;
  end if;

  if v_rows = 0 then
    select r.state, r.fingerprint, r.decision, r.expires_at into a
      from ledger_reservation r where r.request_id = p_request_id;
    o_outcome := case when a.fingerprint = p_fingerprint then 'replay' else 'conflict' end;
    o_state := a.state; o_decision := a.decision; o_expires_at := a.expires_at;
    return;
  end if;
  if v_reason is null and p_concurrency_key is not null then
    update ledger_slot s set active = s.active + 1 where s.key = p_concurrency_key;
  end if;
  o_outcome := 'new';
end
$fn$`,

  sql`
create function ledger_settle(
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
$fn$`,

  sql`
create function ledger_expire_due(p_limit integer, p_note text) returns setof text
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
$fn$`,

  sql`
create function ledger_grant(
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
$fn$`,
]

export async function down(db: Kysely<any>): Promise<void> {
  for (const f of ['ledger_reserve', 'ledger_settle', 'ledger_expire_due', 'ledger_grant'])
    await sql`drop function if exists ${sql.raw(f)}`.execute(db)
  for (const t of [
    'ledger_transition',
    'ledger_slot',
    'ledger_grant',
    'ledger_journal',
    'ledger_reservation',
    'ledger_account',
  ])
    await db.schema.dropTable(t).ifExists().execute()
}
