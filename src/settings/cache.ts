import type { DeskRuntime } from '../config/load'
import type { DeskConfig } from '../config/schema'
import type { Db } from '../db/database'
import { PgListener } from '../db/listen'
import type { Logger } from '../log'
import { type DeskSettings, onCommitted, readDesk, SETTINGS_CHANNEL, seedDesk } from './settings'

/**
 * Each process's desks (what `deps.desk(botId)` returns) as a cache of their settings rows. At start a desk
 * without a row is seeded from its YAML desk (or the first-run defaults); a desk with one takes the row (PostgreSQL
 * wins, the YAML desk is ignored, one log line says so). After that a change committed anywhere reaches every
 * process within about two seconds: a notification at commit (LISTEN on SETTINGS_CHANNEL), and a slow poll of the
 * versions as the floor (after a reconnection at once, then every `pollMs`) for notifications lost while the
 * connection was down. A change committed in this process is applied right after its commit.
 *
 * A desk object is updated IN PLACE (its fields replaced by fresh copies of the document's), so whoever holds it
 * (a bot's middleware, a job) sees the new values on its next read; caches derived from a desk are keyed by its
 * nested objects (src/time/schedule.ts keys the compiled schedule by `desk.schedule`), which a change replaces.
 * What must be redone outside (the bot's command menus, the staff menu buttons) is an {@link onChange} hook.
 */

export type ChangeHook = (desk: DeskRuntime, before: DeskConfig) => void | Promise<void>

/** Fields of a desk object that are not the document: they stay as the process started with them. */
const RUNTIME_KEYS = new Set(['token', 'botId', 'settingsVersion'])

/** A desk object's document (without the token, bot id and version). */
export function docOf(desk: DeskRuntime): DeskConfig {
  const doc: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(desk)) if (!RUNTIME_KEYS.has(k)) doc[k] = v
  return structuredClone(doc) as unknown as DeskConfig
}

export interface SettingsCacheOptions {
  /** The version poll's interval (the floor under the notifications). */
  pollMs?: number
  /** What the log line says about the YAML desk when the row wins (e.g. "the YAML desk is ignored"). */
  source?: 'file' | 'defaults'
}

export class DeskSettingsCache {
  private readonly desks = new Map<number, DeskRuntime>()
  private readonly hooks: ChangeHook[] = []
  private readonly queue = new Map<number, Promise<void>>()
  private listener: PgListener | undefined
  private timer: NodeJS.Timeout | undefined
  private unregister: (() => void) | undefined
  private warned = false

  private constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Seeds or reads every desk's row and applies it to the desk objects, then follows changes. */
  static async start(
    db: Db,
    connectionString: string | undefined,
    desks: DeskRuntime[],
    log: Logger,
    opts: SettingsCacheOptions = {},
  ): Promise<DeskSettingsCache> {
    const cache = new DeskSettingsCache(db, log)
    for (const desk of desks) {
      cache.desks.set(desk.botId, desk)
      const s = await seedDesk(db, desk.botId, docOf(desk))
      if (s.seeded) desk.settingsVersion = s.version
      else {
        log.info(
          { desk: s.doc.slug, version: s.version },
          opts.source === 'defaults'
            ? 'desk settings from PostgreSQL'
            : 'desk settings from PostgreSQL: the YAML desk is ignored (npm run config:import loads a file)',
        )
        cache.apply(desk, s)
      }
    }
    cache.unregister = onCommitted(db, (botId, s) => {
      const desk = cache.desks.get(botId)
      if (desk) cache.apply(desk, s)
    })
    if (connectionString) {
      cache.listener = new PgListener(
        connectionString,
        {
          channel: SETTINGS_CHANNEL,
          name: 'consult-desk-settings',
          onNotify: (payload) => {
            const [bot, version] = payload.split(':').map(Number)
            const desk = cache.desks.get(bot ?? Number.NaN)
            if (desk && (version ?? 0) > (desk.settingsVersion ?? 0)) void cache.refresh(desk.botId)
          },
          onConnect: () => void cache.refreshAll(),
          lostMessage: 'settings: no notifications; polling meanwhile',
          backMessage: 'settings: listening again',
        },
        log,
      )
      cache.listener.start()
    }
    cache.timer = setInterval(() => void cache.refreshAll(), opts.pollMs ?? 10_000)
    cache.timer.unref()
    return cache
  }

  /** Runs after a desk object took a new version (in this process), with the document it had before. */
  onChange(hook: ChangeHook): void {
    this.hooks.push(hook)
  }

  /** Reads every desk's version and the rows of the newer ones, and applies them. */
  async refreshAll(): Promise<void> {
    let rows: { bot_id: number; version: number }[]
    try {
      rows = await this.db
        .selectFrom('desk_settings')
        .select(['bot_id', 'version'])
        .where('bot_id', 'in', [...this.desks.keys()])
        .execute()
    } catch (err) {
      if (!this.warned) this.log.warn({ err: (err as Error).message }, 'settings: cannot read the versions')
      this.warned = true
      return
    }
    const newer = rows.filter((r) => r.version > (this.desks.get(r.bot_id)?.settingsVersion ?? 0))
    await Promise.all(newer.map((r) => this.refresh(r.bot_id)))
  }

  /** Reads one desk's row and applies it when newer; one read at a time per desk. */
  refresh(botId: number): Promise<void> {
    const prev = this.queue.get(botId) ?? Promise.resolve()
    const next = prev.then(async () => {
      const desk = this.desks.get(botId)
      if (!desk) return
      try {
        const s = await readDesk(this.db, botId)
        if (s) this.apply(desk, s)
        if (this.warned) this.log.info('settings: reading again')
        this.warned = false
      } catch (err) {
        if (!this.warned)
          this.log.warn({ err: (err as Error).message, desk: desk.slug }, 'settings: cannot read the desk')
        this.warned = true
      }
    })
    this.queue.set(botId, next)
    void next.finally(() => {
      if (this.queue.get(botId) === next) this.queue.delete(botId)
    })
    return next
  }

  /** Replaces a desk object's document fields with the row's (synchronously: nobody sees half of it). */
  private apply(desk: DeskRuntime, s: DeskSettings): void {
    if ((desk.settingsVersion ?? 0) >= s.version) return
    const before = docOf(desk)
    const fields = desk as unknown as Record<string, unknown>
    for (const k of Object.keys(fields)) if (!RUNTIME_KEYS.has(k)) delete fields[k]
    Object.assign(desk, structuredClone(s.doc), { settingsVersion: s.version })
    this.log.info({ desk: desk.slug, version: s.version }, 'desk settings changed')
    for (const hook of this.hooks)
      Promise.resolve()
        .then(() => hook(desk, before))
        .catch((err) =>
          this.log.warn({ err: (err as Error).message, desk: desk.slug }, 'settings: a change hook failed'),
        )
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.unregister?.()
    await this.listener?.stop()
    await Promise.all([...this.queue.values()])
  }
}
