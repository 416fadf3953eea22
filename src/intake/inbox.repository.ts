import type { Update } from 'grammy/types'
import { sql } from 'kysely'
import type pg from 'pg'
import type { Db, Trx } from '../db/database'
import { inboxKeys } from './keys'

/** All SQL of the inbox (the claim itself is the function inbox_take, migration 2026-12-01T0100). */

export interface InboxRow {
  bot_id: number
  update_id: number
  payload: Update
  kind: string
  attempts: number
  /** Times taken, this one included. */
  tries: number
  received_at: Date
}

export interface UpdateRef {
  botId: number
  updateId: number
}

/**
 * Stores updates (one statement, one commit for a whole getUpdates batch). A redelivered update is already there
 * and changes nothing, whatever state it is in. Returns when the rows are committed: only then may Telegram be told.
 */
export async function storeUpdates(pool: pg.Pool, botId: number, updates: readonly Update[]): Promise<void> {
  if (updates.length === 0) return
  const keys = updates.map(inboxKeys)
  await pool.query({
    name: 'inbox_store',
    text: `insert into inbox_update (bot_id, update_id, chat_key, priority, kind, payload)
             select $1::bigint, * from unnest($2::bigint[], $3::text[], $4::smallint[], $5::text[], $6::json[])
           on conflict do nothing`,
    values: [
      botId,
      updates.map((u) => u.update_id),
      keys.map((k) => k.chatKey),
      keys.map((k) => k.priority),
      keys.map((k) => k.kind),
      updates.map((u) => JSON.stringify(u)),
    ],
  })
}

/**
 * Marks `done` as handled, then leases up to `limit` chat heads for `owner`: among `candidates` first, then, when
 * `scan` is set, among all pending chats (see inbox_take).
 */
export async function takeUpdates(
  pool: pg.Pool,
  owner: string,
  done: readonly UpdateRef[],
  candidates: readonly UpdateRef[],
  scan: boolean,
  botIds: readonly number[],
  limit: number,
  leaseSeconds: number,
): Promise<InboxRow[]> {
  const r = await pool.query<InboxRow>({
    name: 'inbox_take',
    text: 'select * from inbox_take($1, $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6, $7::bigint[], $8, $9)',
    values: [
      owner,
      done.map((d) => d.botId),
      done.map((d) => d.updateId),
      candidates.map((d) => d.botId),
      candidates.map((d) => d.updateId),
      scan,
      botIds,
      limit,
      leaseSeconds,
    ],
  })
  return r.rows
}

/** Extends the leases of the updates this owner is still handling. */
export async function renewLeases(
  pool: pg.Pool,
  owner: string,
  refs: readonly UpdateRef[],
  leaseSeconds: number,
): Promise<void> {
  if (refs.length === 0) return
  await pool.query({
    name: 'inbox_renew',
    text: `update inbox_update u set lease_until = clock_timestamp() + make_interval(secs => $4)
             from unnest($2::bigint[], $3::bigint[]) as r (b, i)
             where u.bot_id = r.b and u.update_id = r.i and u.lease_owner = $1 and u.state = 'pending'`,
    values: [owner, refs.map((r) => r.botId), refs.map((r) => r.updateId), leaseSeconds],
  })
}

/**
 * Gives an update back for a later try after `delaySeconds`; `counted` adds a failed attempt. Returns the attempts
 * so far, or undefined when the lease was no longer ours (another processor has it now).
 */
export async function releaseUpdate(
  db: Db,
  owner: string,
  ref: UpdateRef,
  delaySeconds: number,
  counted: boolean,
  error: string,
): Promise<number | undefined> {
  const r = await sql<{ attempts: number }>`
    update inbox_update
      set lease_owner = null, lease_until = null,
          next_attempt_at = clock_timestamp() + make_interval(secs => ${delaySeconds}),
          attempts = attempts + ${counted ? 1 : 0}, last_error = ${error}
      where bot_id = ${ref.botId} and update_id = ${ref.updateId} and lease_owner = ${owner}
        and state = 'pending'
      returning attempts`.execute(db)
  return r.rows[0]?.attempts
}

/** Hands leased updates back at once (a stopping processor), so another process need not wait for the lease. */
export async function dropLeases(pool: pg.Pool, owner: string, refs: readonly UpdateRef[]): Promise<void> {
  if (refs.length === 0) return
  await pool.query(
    `update inbox_update u set lease_owner = null, lease_until = null
       from unnest($2::bigint[], $3::bigint[]) as r (b, i)
       where u.bot_id = r.b and u.update_id = r.i and u.lease_owner = $1 and u.state = 'pending'`,
    [owner, refs.map((r) => r.botId), refs.map((r) => r.updateId)],
  )
}

/** Parks an update for a person, in the caller's transaction (which also tells the user and the staff). */
export async function parkUpdate(trx: Trx, owner: string, ref: UpdateRef, error: string): Promise<boolean> {
  const r = await sql<{ ok: number }>`
    update inbox_update
      set state = 'parked', lease_owner = null, lease_until = null, done_at = clock_timestamp(),
          attempts = attempts + 1, last_error = ${error}
      where bot_id = ${ref.botId} and update_id = ${ref.updateId} and lease_owner = ${owner}
        and state = 'pending'
      returning 1 as ok`.execute(trx)
  return r.rows.length === 1
}

/** Updates not handled yet (pending), for tests, the demo and /health. */
export async function pendingCount(db: Db, botId?: number): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from inbox_update
      where state = 'pending' ${botId === undefined ? sql`` : sql`and bot_id = ${botId}`}`.execute(db)
  return r.rows[0]!.n
}
