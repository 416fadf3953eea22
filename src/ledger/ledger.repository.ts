import { CompiledQuery, type Kysely, sql } from 'kysely'
import type pg from 'pg'
import type { Database } from '../db/database'

/**
 * All of the ledger's SQL. The admission and settle operations are PL/pgSQL functions (created by the migration):
 * one round trip each, plans cached per connection, a fresh READ COMMITTED snapshot per statement after each lock.
 * Every function here runs on whatever it is given: the caller's transaction, or the pool (then the single
 * statement is its own transaction). None of them raises on a refusal, so a caller's transaction survives it.
 */
type Executor = Kysely<Database>

/**
 * Where the hot calls (reserve, settle) run: Kysely (a caller's transaction, or the pool behind it), or the pg pool
 * itself. On the pool they are named prepared statements: parsed and planned once per connection instead of on
 * every call, which on a busy server cost about as much as the ledger work itself.
 */
export type Runner = Executor | pg.Pool

async function run<R>(on: Runner, name: string, text: string, values: unknown[]): Promise<R[]> {
  if ('executeQuery' in on) return (await on.executeQuery<R>(CompiledQuery.raw(text, values))).rows
  return (await on.query({ name, text, values })).rows as R[]
}

export interface ReserveCall {
  requestId: string
  accountIds: (number | null)[]
  scopes: (string | null)[]
  subjects: (string | null)[]
  units: (string | null)[]
  amounts: number[]
  at: Date | null
  /** Per line: the instant whose period applies (null: `at`); null when no line has its own. */
  lineAts: (Date | null)[] | null
  concurrencyKey: string | null
  concurrencyMax: number | null
  ttlSeconds: number
  fingerprint: string
}

export interface ReserveRow {
  /** new | replay | conflict | duplicate_account */
  o_outcome: string
  o_state: string | null
  o_decision: StoredDecision | null
  o_expires_at: Date | null
}

/** The decision as stored on the reservation (numbers as read, before the hold). */
export interface StoredDecision {
  reason: string | null
  line: number | null
  lines: StoredLine[]
  concurrency: { key: string; active: number; max: number } | null
}

export interface StoredLine {
  accountId: number | null
  scope: string | null
  subject: string | null
  unit: string | null
  amount: number
  granted?: number
  reserved?: number
  used?: number
  holds?: number
  periodStart?: string
  periodEnd?: string
  timeZone?: string
}

const RESERVE_SQL = `select * from ledger_reserve($1, $2::bigint[], $3::text[], $4::text[], $5::text[],
  $6::bigint[], $7::timestamptz, $8::text, $9::integer, $10::double precision, $11::text, $12::timestamptz[])`

const RESERVE_ONE_SQL = `select * from ledger_reserve_one($1, $2::bigint, $3::text, $4::text, $5::text, $6::bigint,
  $7::timestamptz, $8::double precision, $9::text)`

/**
 * One call to the database, whatever the outcome. A one-line reservation without a concurrency limit (the hot
 * case) goes to ledger_reserve_one, which takes scalars instead of seven arrays; the same row comes back.
 */
export async function callReserve(on: Runner, c: ReserveCall): Promise<ReserveRow> {
  if (c.amounts.length === 1 && c.concurrencyKey === null) return callReserveOne(on, c)
  const rows = await run<ReserveRow>(on, 'ledger_reserve', RESERVE_SQL, [
    c.requestId,
    c.accountIds,
    c.scopes,
    c.subjects,
    c.units,
    c.amounts,
    c.at,
    c.concurrencyKey,
    c.concurrencyMax,
    c.ttlSeconds,
    c.fingerprint,
    c.lineAts,
  ])
  return rows[0]!
}

async function callReserveOne(on: Runner, c: ReserveCall): Promise<ReserveRow> {
  const rows = await run<ReserveRow>(on, 'ledger_reserve_one', RESERVE_ONE_SQL, [
    c.requestId,
    c.accountIds[0],
    c.scopes[0],
    c.subjects[0],
    c.units[0],
    c.amounts[0],
    c.lineAts?.[0] ?? c.at,
    c.ttlSeconds,
    c.fingerprint,
  ])
  return rows[0]!
}

export interface SettleRow {
  /** done | replay | conflict | not_found | invalid_transition | lines_mismatch */
  o_outcome: string
  o_state: string | null
  o_prev_state: string | null
  o_amounts: number[] | null
  o_actuals: number[] | null
  o_charged: number[] | null
  o_overrun: boolean | null
  o_accounts: { accountId: number; granted: number; reserved: number; used: number; holds: number }[] | null
}

// Arrays come back as jsonb: they are read without the int8[] type parser.
const SETTLE_SQL = `select o_outcome, o_state, o_prev_state, to_jsonb(o_amounts) as o_amounts,
  to_jsonb(o_actuals) as o_actuals, to_jsonb(o_charged) as o_charged, o_overrun, o_accounts
  from ledger_settle($1, $2, $3::bigint[], $4, $5::text)`

/**
 * ledger_settle_one's row. A one-line commit or release: o_line = [account id, amount, actual, charged, overrun,
 * granted, reserved, used, holds] (the account's numbers after it). Any other outcome: o_full, the full path's result.
 */
interface SettleOneRow {
  o_outcome: string
  o_state: string | null
  o_line: [number, number, number | null, number | null, boolean, number, number, number, number] | null
  o_full: {
    prevState: string | null
    amounts: number[] | null
    actuals: number[] | null
    charged: number[] | null
    overrun: boolean | null
    accounts: SettleRow['o_accounts']
  } | null
}

const SETTLE_ONE_SQL = 'select * from ledger_settle_one($1, $2, $3::bigint, $4, $5::text)'

/**
 * One call to the database, whatever the outcome. With at most one actual it goes to ledger_settle_one (a one-line
 * commit or release comes back as one small json array); several actuals go to ledger_settle.
 */
export async function callSettle(
  on: Runner,
  requestId: string,
  to: 'committed' | 'released' | 'unknown',
  actuals: number[] | null,
  policy: string,
  note: string | null,
): Promise<SettleRow> {
  if (actuals === null || actuals.length === 1) {
    const [row] = await run<SettleOneRow>(on, 'ledger_settle_one', SETTLE_ONE_SQL, [
      requestId,
      to,
      actuals?.[0] ?? null,
      policy,
      note,
    ])
    const { o_outcome, o_state, o_line: l, o_full: f } = row!
    if (l)
      return {
        o_outcome,
        o_state,
        o_prev_state: 'reserved',
        o_amounts: [l[1]],
        o_actuals: l[2] === null ? null : [l[2]],
        o_charged: l[3] === null ? null : [l[3]],
        o_overrun: l[4],
        o_accounts: [{ accountId: l[0], granted: l[5], reserved: l[6], used: l[7], holds: l[8] }],
      }
    return {
      o_outcome,
      o_state,
      o_prev_state: f?.prevState ?? null,
      o_amounts: f?.amounts ?? null,
      o_actuals: f?.actuals ?? null,
      o_charged: f?.charged ?? null,
      o_overrun: f?.overrun ?? null,
      o_accounts: f?.accounts ?? null,
    }
  }
  const rows = await run<SettleRow>(on, 'ledger_settle', SETTLE_SQL, [requestId, to, actuals, policy, note])
  return rows[0]!
}

/** Expires up to `limit` reservations past their deadline (SKIP LOCKED); returns their request ids. */
export async function callExpireDue(db: Executor, limit: number, note: string): Promise<string[]> {
  const r = await sql<{ request_id: string }>`
    select ledger_expire_due as request_id from ledger_expire_due(${limit}::integer, ${note}::text)`.execute(
    db,
  )
  return r.rows.map((x) => x.request_id)
}

export interface GrantCall {
  requestId: string
  scope: string
  subject: string
  unit: string
  periodStart: Date
  periodEnd: Date
  timeZone: string
  amount: number
  carryCap: number | null
  fingerprint: string
}

export interface GrantRow {
  /** new | replay | conflict | period_mismatch */
  o_outcome: string
  o_account_id: number | null
  o_amount: number | null
  o_carried: number | null
  o_carried_from: number | null
}

export async function callGrant(db: Executor, g: GrantCall): Promise<GrantRow> {
  const r = await sql<GrantRow>`
    select * from ledger_grant(${g.requestId}, ${g.scope}, ${g.subject}, ${g.unit}, ${g.periodStart}::timestamptz,
      ${g.periodEnd}::timestamptz, ${g.timeZone}, ${g.amount}::bigint, ${g.carryCap}::bigint,
      ${g.fingerprint})`.execute(db)
  return r.rows[0]!
}

export function findAccountById(db: Executor, id: number) {
  return db.selectFrom('ledger_account').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The account of this key whose period contains `at` (default: now()). */
export function findAccountByKey(
  db: Executor,
  scope: string,
  subject: string,
  unit: string,
  at: Date | null,
) {
  const instant = at ? sql`${at}::timestamptz` : sql`now()`
  return db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', scope)
    .where('subject', '=', subject)
    .where('unit', '=', unit)
    .where('period_start', '<=', instant as any)
    .where('period_end', '>', instant as any)
    .orderBy('period_start', 'desc')
    .limit(1)
    .executeTakeFirst()
}

export interface ReservationRow {
  request_id: string
  state: string
  prev_state: string | null
  account_ids: (number | null)[]
  amounts: number[]
  actuals: number[] | null
  charged: number[] | null
  overrun: boolean
  concurrency_key: string | null
  decision: StoredDecision
  created_at: Date
  expires_at: Date | null
  settled_at: Date | null
  note: string | null
}

/** Array columns as jsonb: read without depending on the int8[] type parser. */
const reservationColumns = sql`request_id, state, prev_state, to_jsonb(account_ids) as account_ids,
  to_jsonb(amounts) as amounts, to_jsonb(actuals) as actuals, to_jsonb(charged) as charged, overrun,
  concurrency_key, decision, created_at, expires_at, settled_at, note`

export async function findReservation(db: Executor, requestId: string): Promise<ReservationRow | undefined> {
  const r = await sql<ReservationRow>`
    select ${reservationColumns} from ledger_reservation where request_id = ${requestId}`.execute(db)
  return r.rows[0]
}

/** The journal of one account, oldest first: what explains its counters. */
export function listJournal(db: Executor, accountId: number) {
  return db
    .selectFrom('ledger_journal')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute()
}

/** Reservations whose outcome is unknown, oldest first (for reconciliation by a person or a job). */
export async function listUnknown(db: Executor, limit: number): Promise<ReservationRow[]> {
  const r = await sql<ReservationRow>`
    select ${reservationColumns} from ledger_reservation where state = 'unknown'
    order by created_at limit ${limit}`.execute(db)
  return r.rows
}

/**
 * A manual correction with its journal row, in one conditional statement: refused (no row) if it would make
 * granted or used negative.
 */
export async function adjustAccount(
  db: Executor,
  a: { accountId: number; dGranted: number; dUsed: number; requestId: string | null; note: string },
) {
  const r = await sql<{ id: number; granted: number; reserved: number; used: number; holds: number }>`
    with u as (
      update ledger_account set granted = granted + ${a.dGranted}::bigint, used = used + ${a.dUsed}::bigint
      where id = ${a.accountId}::bigint and granted + ${a.dGranted}::bigint >= 0 and used + ${a.dUsed}::bigint >= 0
      returning id, granted, reserved, used, holds),
    j as (
      insert into ledger_journal (account_id, request_id, reason, d_granted, d_used, note)
      select id, ${a.requestId}::text, 'adjust', ${a.dGranted}::bigint, ${a.dUsed}::bigint, ${a.note}::text from u)
    select * from u`.execute(db)
  return r.rows[0]
}

export function setAccountActive(db: Executor, accountId: number, active: boolean) {
  return db
    .updateTable('ledger_account')
    .set({ active })
    .where('id', '=', accountId)
    .returning(['id', 'active'])
    .executeTakeFirst()
}

export interface CounterRow {
  id: number
  granted: number
  reserved: number
  used: number
  holds: number
  j_granted: number
  j_reserved: number
  j_used: number
  open_reserved: number
  open_holds: number
}

/** Accounts whose counters disagree with their journal or with their open reservations. */
export async function counterMismatches(db: Executor): Promise<CounterRow[]> {
  const r = await sql<CounterRow>`
    with j as (
      select account_id, sum(d_granted)::bigint as g, sum(d_reserved)::bigint as r, sum(d_used)::bigint as u
      from ledger_journal group by account_id),
    o as (
      select x.id as account_id, sum(x.amount)::bigint as r, count(*)::bigint as n
      from ledger_reservation res, unnest(res.account_ids, res.amounts) x(id, amount)
      where res.state in ('reserved', 'unknown') group by x.id)
    select a.id, a.granted, a.reserved, a.used, a.holds,
      coalesce(j.g, 0)::bigint as j_granted, coalesce(j.r, 0)::bigint as j_reserved, coalesce(j.u, 0)::bigint as j_used,
      coalesce(o.r, 0)::bigint as open_reserved, coalesce(o.n, 0)::bigint as open_holds
    from ledger_account a
    left join j on j.account_id = a.id
    left join o on o.account_id = a.id
    where a.granted <> coalesce(j.g, 0) or a.reserved <> coalesce(j.r, 0) or a.used <> coalesce(j.u, 0)
       or a.reserved <> coalesce(o.r, 0) or a.holds <> coalesce(o.n, 0)
    order by a.id`.execute(db)
  return r.rows
}

/** Concurrency slots whose counter differs from the number of reservations in state reserved under the key. */
export async function slotMismatches(db: Executor) {
  const r = await sql<{ key: string; active: number; reserved: number }>`
    select coalesce(s.key, c.key) as key, coalesce(s.active, 0)::bigint as active, coalesce(c.n, 0)::bigint as reserved
    from ledger_slot s
    full join (select concurrency_key as key, count(*) as n from ledger_reservation
               where state = 'reserved' and concurrency_key is not null group by 1) c on c.key = s.key
    where coalesce(s.active, 0) <> coalesce(c.n, 0)`.execute(db)
  return r.rows
}

export async function ledgerTotals(db: Executor) {
  const r = await sql<{ accounts: number; reservations: number; journal_rows: number }>`
    select (select count(*) from ledger_account)::bigint as accounts,
      (select count(*) from ledger_reservation)::bigint as reservations,
      (select count(*) from ledger_journal)::bigint as journal_rows`.execute(db)
  return r.rows[0]!
}

export async function overGrantAccounts(db: Executor): Promise<number[]> {
  const r = await sql<{ id: number }>`
    select id from ledger_account where reserved + used > granted order by id`.execute(db)
  return r.rows.map((x) => x.id)
}
