import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { User } from 'grammy/types'
import { type BotApiStandIn, startBotApi } from '../../test/support/bot-api'
import { type App, startApp } from '../app'
import { loadConfig } from '../config/load'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../db/embedded'
import { createLogger, quietLogger } from '../log'
import { readDesk } from '../settings/settings'
import { settle as settleDesk } from './settle'
import { out, Transcript } from './transcript'

/**
 * What the demos (`npm run demo`, src/demo/demo.ts; `npm run demo:plan`, src/demo/plan-demo.ts) share: an empty
 * desk started the way a new expert starts it (an embedded PostgreSQL in a throwaway directory, the real app with a
 * bot token and no config file, the Bot API stand-in of the tests in Telegram's place), the cast (Ada the owner, Ed
 * the expert, Anna the client) with the transcript of what each saw, and the owner's set-up from Telegram (claim,
 * staff group, expert by invite, round-the-clock hours). Each demo then creates what it sells in /settings and plays
 * its story.
 */

export const TOKEN = `7000042:${'D'.repeat(35)}`
export const BOT_ID = 7000042
export const STAFF_CHAT = -1001000000042
export const ADMIN_ID = 100000001
export const EXPERT_ID = 100000002
export const WAIT_MS = 20_000

export interface DemoWorld {
  app: App
  tg: BotApiStandIn
  pg: EmbeddedServer
}

/** The desk is idle (no update waiting, no job due, nothing pending in a lane). */
function settle(w: DemoWorld): Promise<void> {
  return settleDesk(w.app.deps.db, w.tg, BOT_ID, WAIT_MS)
}

/**
 * Starts an empty desk (its own database `database`), lets the owner set it up from Telegram with the owner link the
 * app printed at start, runs `play` on it, and stops everything it started, whatever happens. `title` is the demo's
 * first line.
 */
export async function playOnEmptyDesk(
  title: string,
  database: string,
  started: number,
  play: (stage: Stage) => Promise<void>,
): Promise<void> {
  out(title)
  out(
    '(embedded PostgreSQL in a throwaway directory, the real app, a Telegram stand-in; no token, no network)',
  )
  const log = process.env.LOG_LEVEL ? createLogger(process.env.LOG_LEVEL) : quietLogger()
  const pg = await startEmbeddedPostgres()
  const cleanup: (() => Promise<unknown>)[] = [() => pg.stop()]
  try {
    const url = await ensureDatabase(pg.url, database)
    const tg = await startBotApi({ defaultWaitTimeoutMs: WAIT_MS })
    cleanup.push(() => tg.close())
    tg.forum({ id: STAFF_CHAT, title: 'Desk staff' })
    // A new expert's first run: a token and nothing else (no config file: an empty directory as the working one).
    const empty = mkdtempSync(path.join(os.tmpdir(), 'consult-desk-demo-'))
    cleanup.push(async () => rmSync(empty, { recursive: true, force: true }))
    const config = loadConfig(
      { BOT_TOKEN: TOKEN, DESK_LANGUAGE: 'en', TZ: 'UTC', DATABASE_URL: url, TELEGRAM_API_ROOT: tg.root },
      empty,
    )
    config.http = { host: '127.0.0.1', port: 0 }
    out()
    out('$ BOT_TOKEN=… npm start')
    // The owner link is printed at start (what a new expert copies from the console); the script opens it.
    let printed = ''
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      printed += String(chunk)
      return write(chunk, ...rest)
    }) as typeof process.stdout.write
    let app: App
    try {
      app = await startApp(config, { role: 'all', log })
    } finally {
      process.stdout.write = write
    }
    cleanup.push(() => app.stop())
    const claim = /\?start=(own_[A-Za-z0-9_-]+)/.exec(printed)?.[1]
    if (!claim) throw new Error('no owner link was printed at start')
    out(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s: bot (polling) and workers running`)
    await play(await setUpDesk(cast({ app, tg, pg }), claim))
  } finally {
    while (cleanup.length) await cleanup.pop()!().catch(() => {})
  }
  out()
  out(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s; everything it started is stopped.`)
}

/** Runs a demo's main: exit code 0 on success, 1 with the error; a hard stop so it never runs forever in CI. */
export function runDemo(main: () => Promise<void>): void {
  setTimeout(() => {
    process.stderr.write('demo: did not finish within 300 s\n')
    process.exit(1)
  }, 300_000).unref()
  main().then(
    () => {
      process.exitCode = 0
    },
    (err) => {
      process.stderr.write(`demo failed: ${(err as Error).stack ?? err}\n`)
      process.exitCode = 1
    },
  )
}

/** The owner (Ada) in her private chat with the bot: buttons pressed and answers typed, each printed and waited for. */
export class OwnerChat {
  private mark: number

  constructor(
    private readonly w: DemoWorld,
    private readonly t: Transcript,
    private readonly step: () => Promise<void>,
    readonly ada: User,
  ) {
    this.mark = w.tg.mark()
  }

  /** The desk's settings version now (the buttons of /settings carry it). */
  async version(): Promise<number> {
    return (await readDesk(this.w.app.deps.db, BOT_ID))!.version
  }

  /** Waits for the bot's message to Ada matching `reply` (since her last action), then prints what happened. */
  async sees(reply: RegExp) {
    const m = await this.w.tg.waitForSent(ADMIN_ID, reply, { since: this.mark })
    this.mark = this.w.tg.mark()
    await this.step()
    return m
  }

  /** Ada types an answer to the bot's question and waits for its reply. */
  async say(text: string, reply: RegExp) {
    this.t.act('Ada', 'bot', text)
    await this.w.tg.push(BOT_ID, this.w.tg.privateText(this.ada, text))
    return this.sees(reply)
  }

  /** Ada sends a command (`/invite expert`: command 'invite', args 'expert') and waits for its reply. */
  async command(command: string, args: string | undefined, reply: RegExp) {
    this.t.act('Ada', 'bot', `/${command}${args ? ` ${args}` : ''}`)
    await this.w.tg.push(BOT_ID, this.w.tg.command(this.ada, `/${command}`, ...(args ? [args] : [])))
    return this.sees(reply)
  }

  /** Ada presses a button; without `reply`, waits for any message or edit in her chat. */
  async press(label: string, data: string, reply?: RegExp) {
    this.t.act('Ada', 'bot', `[ ${label} ]`)
    await this.w.tg.push(BOT_ID, this.w.tg.callback(this.ada, data))
    if (reply) return this.sees(reply)
    await this.w.tg.waitFor(['editMessageText', 'sendMessage'], { chat_id: ADMIN_ID }, { since: this.mark })
    this.mark = this.w.tg.mark()
    await this.step()
    return undefined
  }

  /** Something Ada does in Telegram outside the chat (an update pushed), then the bot's reply to her. */
  async does(what: string, update: Parameters<BotApiStandIn['push']>[1], reply: RegExp) {
    this.t.act('Ada', 'Telegram', what)
    await this.w.tg.push(BOT_ID, update)
    return this.sees(reply)
  }
}

/** A demo's stage: the desk, its cast, the transcript, and the number of the last scene played. */
export interface Stage {
  w: DemoWorld
  /** The client. */
  anna: User
  /** The expert. */
  ed: User
  /** The owner in her private chat with the bot. */
  owner: OwnerChat
  t: Transcript
  /** Waits until the desk is idle, then prints what each party saw meanwhile. */
  step: () => Promise<void>
  n: number
}

/** The cast (Anna the client, Ed the expert, Ada the owner) and the transcript of what each of them sees. */
function cast(w: DemoWorld): Omit<Stage, 'n'> {
  const { tg } = w
  const anna = tg.user({ first_name: 'Anna', username: 'anna_dev', language_code: 'en' })
  const ed = tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'en' })
  const ada = tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
  const t = new Transcript(
    tg,
    anna,
    STAFF_CHAT,
    new Map([
      [EXPERT_ID, 'Ed'],
      [ADMIN_ID, 'Ada'],
    ]),
  )
  const step = async () => {
    await settle(w)
    t.flush()
  }
  return { w, anna, ed, owner: new OwnerChat(w, t, step, ada), t, step }
}

/**
 * The owner sets the empty desk up from Telegram: claim, staff group (refused without the rights, then confirmed),
 * the expert by invite, and round-the-clock hours in /settings (so the demo reads the same whenever it runs).
 * Nothing is sold yet: each demo creates its tariff or plan next.
 */
async function setUpDesk(s: Omit<Stage, 'n'>, claim: string): Promise<Stage> {
  const { w, t, owner: ada } = s
  const { tg } = w
  let n = 0

  t.section(++n, 'Ada opens the owner link printed at start and becomes the owner')
  await ada.command('start', claim, /you are the owner of this desk now/)

  t.section(++n, 'Ada adds the bot to the staff group «Desk staff»: first without the rights it needs')
  await ada.does(
    'adds the bot to «Desk staff» as a member',
    tg.setBotMember(BOT_ID, STAFF_CHAT, ada.ada, 'member'),
    /cannot be the staff group yet/,
  )
  await ada.does(
    'makes the bot an admin: Manage topics, Pin messages, Delete messages',
    tg.setBotMember(BOT_ID, STAFF_CHAT, ada.ada, {
      rights: { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true },
    }),
    /Use «Desk staff» as the staff group\?/,
  )
  await ada.press('Use «Desk staff»', `sg:use:${STAFF_CHAT}`, /is the staff group now/)

  t.section(++n, 'Ada invites Ed, the expert; Ed opens the link')
  const link = await ada.command('invite', 'expert', /start=inv_/)
  const invite = /start=(inv_[A-Za-z0-9_-]+)/.exec(String(link.text))![1]!
  t.act('Ed', 'bot', `/start ${invite}`)
  await tg.push(BOT_ID, tg.command(s.ed, '/start', invite))
  await tg.waitForSent(EXPERT_ID, /you are an expert now/)
  await ada.sees(/joined the desk/)

  t.section(++n, 'Ada sets the hours in /settings: round the clock, every day')
  await ada.command('settings', undefined, /Desk settings/)
  await ada.press('🕒 Hours', 'st:h')
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
  for (const [i, d] of days.entries()) {
    await ada.press(d[0]!.toUpperCase() + d.slice(1), `st:hw:${d}:${await ada.version()}`, /Send the hours/)
    await ada.say('00:00-24:00', /Saved/)
    if (i === 0) {
      t.note('the same for Tuesday to Sunday')
      t.quiet = true
    }
  }
  t.quiet = false
  return { ...s, n }
}
