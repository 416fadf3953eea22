/**
 * Telegram's flood limits as the Bot API stand-in enforces them when started with `limits` (test/support/bot-api.ts):
 * sliding windows per bot - at most `group.count` messages in any `group.seconds` into one group (all its topics
 * together), `chat.count` in `chat.seconds` into one private chat, `bot.count` in `bot.seconds` overall. A call past a
 * limit is refused with 429 and parameters.retry_after (whole seconds, at least 1), as Telegram does, and counted
 * in `refused`. `scale` multiplies every window (the app runs with the same factor: TELEGRAM_WINDOW_SCALE).
 *
 * What counts here is written from Telegram's side, independently of the app's list (src/telegram/budget.ts): every
 * message a call puts into a chat (a copyMessages of n ids or an album of n parts counts n), edits, topic creation
 * and changes, pins (they post service messages).
 */
export interface LimitsOptions {
  bot?: { count: number; seconds: number }
  group?: { count: number; seconds: number }
  chat?: { count: number; seconds: number }
  scale?: number
}

const COUNTED = new Set(
  [
    'sendMessage',
    'sendPhoto',
    'sendVideo',
    'sendAnimation',
    'sendAudio',
    'sendDocument',
    'sendSticker',
    'sendVoice',
    'sendVideoNote',
    'sendLocation',
    'sendVenue',
    'sendContact',
    'sendPoll',
    'sendDice',
    'sendInvoice',
    'sendMediaGroup',
    'copyMessage',
    'copyMessages',
    'forwardMessage',
    'forwardMessages',
    'editMessageText',
    'editMessageCaption',
    'editMessageMedia',
    'editMessageReplyMarkup',
    'createForumTopic',
    'editForumTopic',
    'closeForumTopic',
    'reopenForumTopic',
    'pinChatMessage',
  ].map((m) => m.toLowerCase()),
)

interface Window {
  limit: number
  ms: number
  sends: { at: number; n: number }[]
}

export class TelegramLimiter {
  /** Calls refused with 429. */
  refused = 0
  /** Refused calls by key ('bot:<id>', 'chat:<bot>:<chat>'). */
  readonly refusedBy = new Map<string, number>()
  private readonly windows = new Map<string, Window>()
  private bot!: { count: number; ms: number }
  private group!: { count: number; ms: number }
  private chat!: { count: number; ms: number }

  constructor(private readonly opts: LimitsOptions = {}) {
    this.rescale(opts.scale ?? 1)
  }

  /** Runs Telegram's windows at another scale from now on (a benchmark's phases); forgets the sends so far. */
  rescale(scale: number): void {
    const w = (d: { count: number; seconds: number }) => ({ count: d.count, ms: d.seconds * 1000 * scale })
    this.bot = w(this.opts.bot ?? { count: 30, seconds: 1 })
    this.group = w(this.opts.group ?? { count: 20, seconds: 60 })
    this.chat = w(this.opts.chat ?? { count: 3, seconds: 3 })
    this.windows.clear()
  }

  /** The retry_after in seconds when the call is past a limit (and not counted); undefined: counted, go on. */
  check(botId: number, method: string, payload: Record<string, any>, now = Date.now()): number | undefined {
    const m = method.toLowerCase()
    if (!COUNTED.has(m)) return undefined
    let n = 1
    if (m === 'copymessages' || m === 'forwardmessages') n = toArray(payload.message_ids).length || 1
    if (m === 'sendmediagroup') n = toArray(payload.media).length || 1
    const chat = payload.chat_id
    const keys: [string, { count: number; ms: number }][] = [[`bot:${botId}`, this.bot]]
    if (chat !== undefined) {
      const group = typeof chat === 'string' ? !/^\d+$/.test(chat) : Number(chat) < 0
      keys.push([`chat:${botId}:${chat}`, group ? this.group : this.chat])
    }
    let wait = 0
    const wins = keys.map(([key, l]) => {
      let win = this.windows.get(key)
      if (!win) {
        win = { limit: l.count, ms: l.ms, sends: [] }
        this.windows.set(key, win)
      }
      while (win.sends.length && win.sends[0]!.at <= now - win.ms) win.sends.shift()
      const used = win.sends.reduce((s, x) => s + x.n, 0)
      let need = used + n - win.limit
      if (need > 0) {
        let freeAt = now + win.ms
        for (const s of win.sends) {
          need -= s.n
          if (need <= 0) {
            freeAt = s.at + win.ms
            break
          }
        }
        wait = Math.max(wait, freeAt - now)
        this.refusedBy.set(key, (this.refusedBy.get(key) ?? 0) + 1)
      }
      return win
    })
    if (wait > 0) {
      this.refused++
      return Math.max(1, Math.ceil(wait / 1000))
    }
    for (const win of wins) win.sends.push({ at: now, n })
    return undefined
  }
}

function toArray(v: unknown): unknown[] {
  if (Array.isArray(v)) return v
  if (typeof v === 'string') {
    try {
      const j = JSON.parse(v)
      return Array.isArray(j) ? j : []
    } catch {
      return []
    }
  }
  return []
}
