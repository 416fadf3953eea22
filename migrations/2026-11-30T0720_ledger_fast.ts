import { type Kysely, sql } from 'kysely'

/**
 * Fast paths for the ledger's two hot operations, in front of the unchanged full functions of 2026-11-30T0100
 * (renamed ledger_reserve_full and ledger_settle_full; same arguments, same results, same stored rows), and the
 * ledger's CHECK constraints restated in a form PostgreSQL prepares faster.
 *
 * ledger_reserve: a one-line reservation without a concurrency limit (a client's appeal, a capacity place) is a
 * conditional UPDATE of the account (active, period holds the instant, enough available) that locks the row and
 * returns the numbers it decided on, then the reservation row (decision built from those numbers, exactly as the
 * full path stores it) and its journal row. Anything else - a refusal, whose reason and numbers the full path reads
 * under the lock, several lines, a concurrency slot, a request id already used - goes to ledger_reserve_full.
 *
 * ledger_settle: committing or releasing a one-line reservation is a conditional UPDATE of the reservation (allowed
 * by ledger_transition from its current state) that locks it and returns what it held, then the account, the
 * journal row, and the concurrency slot only when the hold had one. Anything else - a replay, a conflict, an invalid
 * move, markUnknown, several lines, actuals that do not match the lines - goes to ledger_settle_full.
 *
 * Why: the full functions lock with SELECT ... FOR UPDATE and write in further statements (a row locked and then
 * updated is written twice), and check the transition table, the line count and the outcome in separate steps. Each
 * statement in a PL/pgSQL function costs an executor start-up, which is most of the work for one row. Plain
 * statements also measured cheaper than one data-modifying CTE doing the same (CTE scans, joins, tuple stores).
 * Lock order is unchanged (reservation row, then accounts, then slots), as are the decisions, the numbers stored and
 * the journal rows (one per changed account, with its reason).
 *
 * CHECKs: PostgreSQL reads each CHECK expression back from its stored text, and plans it, at the start of every
 * statement that writes the table; a cycle writes the reservation and journal tables twice each. `x in ('a', ...)`
 * is stored as an array built from one constant node per element (rebuilt by every statement); `x = any
 * ('{a,...}')` is one array constant. Same rules, cheaper to prepare.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter function ledger_reserve(text, bigint[], text[], text[], text[], bigint[], timestamptz, text, integer,
    double precision, text) rename to ledger_reserve_full`.execute(db)
  await sql`alter function ledger_settle(text, text, bigint[], text, text) rename to ledger_settle_full`.execute(
    db,
  )

  // Same rules as 2026-11-30T0100 (NOT VALID + VALIDATE: existing rows are checked without blocking writers long).
  await sql`
    alter table ledger_reservation drop constraint ledger_reservation_sane,
      add constraint ledger_reservation_sane check (
        state = any ('{reserved,committed,released,expired,unknown,refused}'::text[])
        and (prev_state is null) = (state = any ('{reserved,refused}'::text[]))
        and cardinality(account_ids) = cardinality(amounts)
        and length(request_id) between 1 and 200) not valid`.execute(db)
  await sql`alter table ledger_reservation validate constraint ledger_reservation_sane`.execute(db)
  await sql`
    alter table ledger_journal drop constraint ledger_journal_reason,
      add constraint ledger_journal_reason
        check (reason = any ('{grant,reserve,commit,release,expire,adjust,rollover}'::text[])) not valid`.execute(
    db,
  )
  await sql`alter table ledger_journal validate constraint ledger_journal_reason`.execute(db)

  await sql`
create function ledger_reserve(
  p_request_id text, p_account_ids bigint[], p_scopes text[], p_subjects text[], p_units text[], p_amounts bigint[],
  p_at timestamptz, p_concurrency_key text, p_concurrency_max integer, p_ttl_seconds double precision,
  p_fingerprint text,
  out o_outcome text, out o_state text, out o_decision jsonb, out o_expires_at timestamptz)
language plpgsql as $fn$
declare
  v_at timestamptz;
  v_id bigint;
  v_amount bigint;
  a record;
begin
  if cardinality(p_amounts) = 1 and p_concurrency_key is null then
    v_at := coalesce(p_at, now());
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
      p_concurrency_key, p_concurrency_max, p_ttl_seconds, p_fingerprint) f;
end
$fn$`.execute(db)

  await sql`
create function ledger_settle(
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
$fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table ledger_journal drop constraint ledger_journal_reason,
      add constraint ledger_journal_reason
        check (reason in ('grant', 'reserve', 'commit', 'release', 'expire', 'adjust', 'rollover'))`.execute(
    db,
  )
  await sql`
    alter table ledger_reservation drop constraint ledger_reservation_sane,
      add constraint ledger_reservation_sane check (
        state in ('reserved', 'committed', 'released', 'expired', 'unknown', 'refused')
        and (prev_state is null) = (state in ('reserved', 'refused'))
        and cardinality(account_ids) = cardinality(amounts)
        and length(request_id) between 1 and 200)`.execute(db)
  await sql`drop function ledger_settle(text, text, bigint[], text, text)`.execute(db)
  await sql`drop function ledger_reserve(text, bigint[], text[], text[], text[], bigint[], timestamptz, text, integer,
    double precision, text)`.execute(db)
  await sql`alter function ledger_settle_full(text, text, bigint[], text, text) rename to ledger_settle`.execute(
    db,
  )
  await sql`alter function ledger_reserve_full(text, bigint[], text[], text[], text[], bigint[], timestamptz, text,
    integer, double precision, text) rename to ledger_reserve`.execute(db)
}
