/**
 * npm run bench:ledger — the ledger's reserve+commit cycle against a raw pg baseline, same PostgreSQL, 32 connections.
 *
 * Baseline, judged (plain pg, the same protocol as the ledger's cycle): two transactions - BEGIN; conditional UPDATE
 * of one account's `reserved`; INSERT of a journal row; COMMIT - then BEGIN; settle UPDATE (reserved -> used); INSERT
 * of a journal row; COMMIT. Printed as `ratio ledger/baseline, <workload>: X`.
 * Baseline, information (the former judged one): one transaction - BEGIN; conditional UPDATE of `used`; INSERT of a
 * journal row; COMMIT. Printed on lines starting with `info:`.
 * Ledger: reserve (one admission: account hold + reservation row + journal row) then commit (settle: reservation
 * state + account + journal row), each its own transaction, through the Ledger API given its pg pool (named prepared
 * statements, as `new Ledger(db, { pool })`).
 * Each runs over 10,000 accounts and on one hot account. Prints ops/s (one op = one baseline cycle of two
 * transactions, one ledger reserve+commit cycle, or one one-transaction op), p50/p99 latency, the ratio ledger/baseline (overall and per pair of slices) and a
 * final invariant check. Within a workload the two implementations alternate in slices, so that drift in a noisy
 * machine's speed, and the tables' growth, fall on both.
 *
 * DATABASE_URL: use that server (a fresh database is created and dropped); otherwise an embedded PostgreSQL is
 * started and stopped. BENCH_SECONDS (default 8) per implementation and workload, in BENCH_ROUNDS (default 4)
 * slices; BENCH_CONNECTIONS (default 32).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { checkInvariants } from '../src/ledger/ledger.invariants'
import { Ledger } from '../src/ledger/ledger.service'
import { quietLogger } from '../src/log'
import { BenchRun, backendsCpuUs, cpuDeltaUs, migratedDatabase, percentile } from './support'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const WARMUP_SECONDS = Math.min(2, SECONDS / 4)
/** Each implementation's SECONDS are cut into this many slices, baseline and ledger alternating. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const ACCOUNTS = 10_000
const WIDE = { periodStart: new Date('2000-01-01T00:00:00Z'), periodEnd: new Date('2100-01-01T00:00:00Z') }

interface Result {
  /** CPU time of the database backends per op (µs), when measurable. */
  serverCpuUs: number | null
  /** CPU time of this Node process per op (µs): the client's share of the machine. */
  clientCpuUs: number
  ops: number
  seconds: number
  latencies: Float64Array
  refused: number
}

/** What a phase has measured so far, over its slices. */
interface Tally {
  ops: number
  seconds: number
  lat: number[]
  refused: number
  clientUs: number
  serverUs: number | null
}

const newTally = (): Tally => ({ ops: 0, seconds: 0, lat: [], refused: 0, clientUs: 0, serverUs: 0 })

/** Request ids stay unique across phases (a reused id would be a replay, or a conflict on another account). */
let seq = 0

type Op = (worker: number, seq: number) => Promise<boolean>

/** `CONNECTIONS` workers looping on `op` for `seconds`, ops not counted. */
async function warmUp(op: Op, seconds: number): Promise<void> {
  const end = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, w) => {
      while (performance.now() < end) await op(w, seq++)
    }),
  )
}

/** `CONNECTIONS` workers looping on `op` for `seconds`, counted into `t`; returns this slice's ops/s. */
async function slice(op: Op, seconds: number, probe: pg.Pool, t: Tally): Promise<number> {
  const ops0 = t.ops
  const server0 = await backendsCpuUs(probe)
  const cpu0 = process.cpuUsage()
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, w) => {
      while (performance.now() < end) {
        const t0 = performance.now()
        const ok = await op(w, seq++)
        t.lat.push(performance.now() - t0)
        t.ops++
        if (!ok) t.refused++
      }
    }),
  )
  const elapsed = (performance.now() - start) / 1000
  const cpu = process.cpuUsage(cpu0)
  const server = cpuDeltaUs(server0, await backendsCpuUs(probe))
  t.seconds += elapsed
  t.clientUs += cpu.user + cpu.system
  t.serverUs = server === null || t.serverUs === null ? null : t.serverUs + server
  return (t.ops - ops0) / elapsed
}

function result(t: Tally): Result {
  return {
    ops: t.ops,
    seconds: t.seconds,
    latencies: Float64Array.from(t.lat).sort(),
    refused: t.refused,
    clientCpuUs: t.clientUs / t.ops,
    serverCpuUs: t.serverUs === null ? null : t.serverUs / t.ops,
  }
}

const rate = (r: Result) => r.ops / r.seconds

async function main() {
  const run = new BenchRun()
  try {
    const { url, handle } = await migratedDatabase(run, 'ledger_bench', CONNECTIONS)
    // With its pool the ledger runs reserve and commit as named prepared statements (see LedgerOptions.pool).
    const ledger = new Ledger(handle.db, { log: quietLogger(), pool: handle.pool })
    const raw = run.hold(
      new pg.Pool({ connectionString: url, max: CONNECTIONS, application_name: 'ledger-bench-baseline' }),
      (p) => p.end(),
    )
    raw.on('error', () => {})
    // Keep every connection for the whole run (pg closes idle ones after 10 s by default), so the backends whose
    // CPU is measured stay the same.
    handle.pool.options.idleTimeoutMillis = 0
    raw.options.idleTimeoutMillis = 0

    // Accounts: 10,000 with room for every op of the run, and one hot account.
    const big = 1_000_000_000
    const ids: number[] = []
    for (let i = 0; i < ACCOUNTS; i += CONNECTIONS) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(CONNECTIONS, ACCOUNTS - i) }, (_, k) =>
          ledger.grant({
            requestId: `bench-grant-${i + k}`,
            scope: 'bench',
            subject: i + k,
            unit: 'units',
            amount: big,
            ...WIDE,
          }),
        ),
      )
      for (const g of batch) {
        if (!g.ok) throw new Error(`grant failed: ${g.reason}`)
        ids.push(g.accountId)
      }
    }
    const hotGrant = await ledger.grant({
      requestId: 'bench-hot',
      scope: 'bench',
      subject: 'hot',
      unit: 'units',
      amount: big,
      ...WIDE,
    })
    if (!hotGrant.ok) throw new Error('hot grant failed')
    const hot = hotGrant.accountId
    await handle.pool.query('vacuum analyze')
    // Open every connection of both pools before measuring.
    await Promise.all(Array.from({ length: CONNECTIONS }, () => handle.pool.query('select pg_sleep(0.05)')))
    await Promise.all(Array.from({ length: CONNECTIONS }, () => raw.query('select pg_sleep(0.05)')))

    const notes = new Map<string, number>()
    const note = (what: string) => notes.set(what, (notes.get(what) ?? 0) + 1)
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!
    const run_id = randomBytes(3).toString('hex')

    /** One transaction of the two-transaction baseline: `update` then, when it took a row, the journal row. */
    const tx = async (update: string, journal: string, id: number, requestId: string) => {
      const c = await raw.connect()
      try {
        await c.query('BEGIN')
        const u = await c.query(update, [id])
        if (u.rowCount === 1) await c.query(journal, [id, requestId])
        await c.query('COMMIT')
        return u.rowCount === 1
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.release()
      }
    }
    // The judged baseline: the ledger's protocol (reserve, then settle), each step its own transaction.
    const baseline2 = (accountOf: () => number) => async (w: number, seq: number) => {
      const id = accountOf()
      const requestId = `base2-${run_id}-${w}-${seq}`
      const reserved = await tx(
        'update ledger_account set reserved = reserved + 1 where id = $1 and granted - reserved - used >= 1',
        "insert into ledger_journal (account_id, request_id, reason, d_reserved) values ($1, $2, 'reserve', 1)",
        id,
        requestId,
      )
      if (!reserved) return false
      return tx(
        'update ledger_account set reserved = reserved - 1, used = used + 1 where id = $1 and reserved >= 1',
        "insert into ledger_journal (account_id, request_id, reason, d_reserved, d_used) values ($1, $2, 'commit', -1, 1)",
        id,
        requestId,
      )
    }
    // For information: the former baseline, one transaction per op.
    const baseline = (accountOf: () => number) => async (w: number, seq: number) => {
      const c = await raw.connect()
      try {
        const id = accountOf()
        await c.query('BEGIN')
        const u = await c.query(
          'update ledger_account set used = used + 1 where id = $1 and granted - reserved - used >= 1',
          [id],
        )
        if (u.rowCount === 1)
          await c.query(
            "insert into ledger_journal (account_id, request_id, reason, d_used) values ($1, $2, 'adjust', 1)",
            [id, `base-${run_id}-${w}-${seq}`],
          )
        await c.query('COMMIT')
        return u.rowCount === 1
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.release()
      }
    }
    const cycle = (accountOf: () => number) => async (w: number, seq: number) => {
      const requestId = `cyc-${run_id}-${w}-${seq}`
      const r = await ledger.reserve({
        requestId,
        lines: [{ account: { accountId: accountOf() }, amount: 1 }],
      })
      if (!r.admitted) {
        note(`reserve refused: ${r.reason}${r.detail ? ` (${r.detail})` : ''}`)
        return false
      }
      const c = await ledger.commit(requestId, 1)
      if (!c.ok) note(`commit refused: ${c.reason}`)
      return c.ok
    }

    const workloads: [string, Op, Op, Op][] = [
      ['10,000 accounts', baseline2(pick), cycle(pick), baseline(pick)],
      ['1 hot account', baseline2(() => hot), cycle(() => hot), baseline(() => hot)],
    ]
    // Durability decides what a commit costs (a WAL flush per transaction, and the cycle has two), so it is printed.
    const setting = async (name: string) => (await handle.pool.query(`show ${name}`)).rows[0][name] as string
    console.log(
      `PostgreSQL ${await setting('server_version')} (fsync ${await setting('fsync')}, synchronous_commit ` +
        `${await setting('synchronous_commit')}), ` +
        `${CONNECTIONS} connections, ${SECONDS} s per implementation and workload in ${ROUNDS} alternating slices ` +
        `(+${WARMUP_SECONDS} s warm-up each)`,
    )
    const results = new Map<string, Result>()
    const sliceRatios = new Map<string, number[]>()
    for (const [workload, baseOp, ledgerOp, oneTxOp] of workloads) {
      await warmUp(baseOp, WARMUP_SECONDS)
      await warmUp(ledgerOp, WARMUP_SECONDS)
      await warmUp(oneTxOp, WARMUP_SECONDS)
      // Baseline and ledger alternate (B L 1, 1 B L, B L 1, ...: the judged pair always adjacent) so that a machine
      // getting busier or quieter during the run, or tables growing, weighs on all alike.
      const b = newTally()
      const l = newTally()
      const one = newTally()
      const ratios: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const seconds = SECONDS / ROUNDS
        if (round % 2 === 0) {
          const rb = await slice(baseOp, seconds, raw, b)
          ratios.push((await slice(ledgerOp, seconds, raw, l)) / rb)
          await slice(oneTxOp, seconds, raw, one)
        } else {
          await slice(oneTxOp, seconds, raw, one)
          const rb = await slice(baseOp, seconds, raw, b)
          ratios.push((await slice(ledgerOp, seconds, raw, l)) / rb)
        }
      }
      sliceRatios.set(workload, ratios)
      for (const [impl, t] of [
        ['baseline', b],
        ['ledger', l],
        ['1-tx base', one],
      ] as const) {
        const r = result(t)
        results.set(`${workload}/${impl}`, r)
        console.log(
          `${workload.padEnd(16)} ${impl.padEnd(9)} ${rate(r).toFixed(0).padStart(7)} ops/s  ` +
            `p50 ${percentile(r.latencies, 50).toFixed(2).padStart(6)} ms  p99 ${percentile(r.latencies, 99).toFixed(2).padStart(6)} ms` +
            `  CPU/op: client ${r.clientCpuUs.toFixed(0).padStart(4)} µs, server ` +
            `${r.serverCpuUs === null ? '   ?' : r.serverCpuUs.toFixed(0).padStart(4)} µs  (${r.ops} ops${r.refused ? `, ${r.refused} refused` : ''})`,
        )
      }
    }
    for (const [what, n] of notes) console.log(`  ${what}: ${n}`)
    console.log('')
    for (const workload of ['10,000 accounts', '1 hot account']) {
      const b = results.get(`${workload}/baseline`)!
      const l = results.get(`${workload}/ledger`)!
      const one = results.get(`${workload}/1-tx base`)!
      const ratio = rate(l) / rate(b)
      const cpu = (r: Result) => (r.serverCpuUs === null ? null : r.serverCpuUs + r.clientCpuUs)
      const cpuRatio = cpu(b) !== null && cpu(l) !== null ? cpu(b)! / cpu(l)! : null
      console.log(
        `ratio ledger/baseline, ${workload}: ${ratio.toFixed(2)} (target >= 0.80${ratio >= 0.8 ? ', met' : ', NOT met'}); ` +
          `per slice pair ${sliceRatios
            .get(workload)!
            .map((x) => x.toFixed(2))
            .join(' ')}; ledger transactions/s (2 per cycle): ${(2 * rate(l)).toFixed(0)}` +
          (cpuRatio === null
            ? ''
            : `; CPU-time ratio (baseline ÷ ledger CPU per op): ${cpuRatio.toFixed(2)}`),
      )
      console.log(
        `info: ratio ledger/one-transaction baseline, ${workload}: ${(rate(l) / rate(one)).toFixed(2)} ` +
          `(the former judged baseline: one conditional UPDATE + journal row in one transaction)`,
      )
    }

    const inv = await checkInvariants(handle.db)
    console.log(
      `invariant: ${inv.ok ? 'ok' : 'VIOLATED'} — ${inv.accounts} accounts, ${inv.reservations} reservations, ` +
        `${inv.journalRows} journal rows; counters == journal sums, reserved == open reservations; ` +
        `accounts over their grant: ${inv.overGrant.length}`,
    )
    if (!inv.ok) console.log(JSON.stringify(inv.violations.slice(0, 10)))
    if (!inv.ok || inv.overGrant.length > 0) process.exitCode = 1
  } finally {
    await run.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
