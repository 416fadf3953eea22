import { type Kysely, sql } from 'kysely'

/**
 * One-line entry points for the ledger's two hot operations, called by the repository for every one-line
 * reservation without a concurrency limit (a client's appeal, a capacity place, a benchmark cycle) and every settle
 * with at most one actual:
 *
 *   ledger_reserve_one(request, account id | key, amount, instant, ttl, fingerprint)
 *     -> (o_outcome, o_state, o_decision, o_expires_at), the shape of ledger_reserve;
 *   ledger_settle_one(request, to, actual, policy, note)
 *     -> (o_outcome, o_state, o_line, o_full).
 *
 * The admission and the settle are those of 2026-11-30T0720/0740 (same conditional UPDATEs, same rows, same stored
 * decision, same journal rows, same lock order). What changes is the framing around them, which on a one-row
 * operation costs as much as the work: scalars in instead of seven arrays (each parsed by the server per call), and
 * a settle's result as one small json array ([account id, amount, actual, charged, overrun, granted, reserved, used,
 * holds]) instead of eight columns holding three arrays and a jsonb list (each column described, rendered and parsed
 * on every call).
 *
 * Anything else - a refusal, a replay, a conflict, a settle of a hold not in state reserved (unknown -> committed,
 * a second commit, release after commit), several lines - goes to the unchanged full functions, in the same call:
 * ledger_reserve_one returns their row as is; ledger_settle_one returns it as o_full (jsonb), o_line null.
 *
 * Why ledger_reserve_one repeats the body of ledger_reserve's fast path instead of calling it with one-element
 * arrays: tried as such a wrapper, the benchmark's 10,000-account ratio fell from 0.88-0.90 to 0.81-0.87 (five runs,
 * interleaved with the copy, one machine): one more function call and its array arguments per admission.
 *
 * Transitions: the fast settle moves only reserved -> committed | released, and only when ledger_transition allows
 * it (the EXISTS below, as in 0720); what the table refuses goes to the full path, which says why.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
create function ledger_reserve_one(
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
$fn$`.execute(db)

  await sql`
create function ledger_settle_one(
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
$fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function ledger_settle_one(text, text, bigint, text, text)`.execute(db)
  await sql`drop function ledger_reserve_one(text, bigint, text, text, text, bigint, timestamptz, double precision,
    text)`.execute(db)
}
