import type { User } from 'grammy/types'
import type { BotApiStandIn, RecordedCall, RecordedFile } from '../../test/support/bot-api'

/**
 * The demos' transcript (src/demo/demo.ts, src/demo/plan-demo.ts): what each party saw, from the calls the Telegram
 * stand-in recorded.
 */

export const out = (line = '') => process.stdout.write(`${line}\n`)

// ---------------------------------------------------------------------------------------------------------------
// What each party saw: the stand-in records every call the bot made; they are printed in order, by audience.

export class Transcript {
  private since = 0
  /** Who pressed the last button (pop-ups go to them). */
  lastActor = ''

  constructor(
    private readonly tg: BotApiStandIn,
    private readonly client: User,
    private readonly staffChat: number,
    /** Private chats of staff, by user id: the name printed. */
    private readonly staff: Map<number, string>,
  ) {}

  section(n: number, title: string): void {
    out()
    out(`── ${n} · ${title} ${'─'.repeat(Math.max(3, 96 - title.length))}`)
  }

  note(text: string): void {
    out(`   ⏩ ${text}`)
  }

  /** A party's own action. */
  act(who: string, where: string, text: string): void {
    this.lastActor = who
    if (this.quiet) return
    this.print(`${who} ▸ ${where}`, text)
  }

  private where(chatId: number, thread: number | undefined): string {
    if (chatId === this.client.id) return `bot ▸ ${this.client.first_name}`
    if (chatId === this.staffChat) return thread ? `bot ▸ topic #${thread}` : 'bot ▸ staff General'
    const name = this.staff.get(chatId)
    if (name) return `bot ▸ ${name} (private)`
    return `bot ▸ ${chatId}`
  }

  private print(label: string, text: string): void {
    const lines = text.split('\n')
    out(`   ${label.padEnd(24)} ${lines[0]}`)
    for (const l of lines.slice(1)) out(`   ${''.padEnd(24)} ${l}`)
  }

  private describe(chatId: number, messageId: number): string {
    const m = this.tg.message(chatId, messageId) as Record<string, any> | undefined
    if (!m) return '(message)'
    const text = m.text ?? m.caption ?? ''
    const kind = ['photo', 'document', 'voice', 'video', 'sticker', 'location'].find(
      (k) => m[k] !== undefined,
    )
    return kind ? `[${kind}]${text ? ` ${text}` : ''}` : text
  }

  private buttons(markup: any): string {
    const rows: any[][] = markup?.inline_keyboard ?? []
    const all = rows.flat().map((b) => `[ ${b.text} ]`)
    return all.length ? `\n${all.join('  ')}` : ''
  }

  /** While set, nothing is printed (a repeat of what was just shown, summed up by a note instead). */
  quiet = false

  /** Prints every call of the bot since the last flush, in the order Telegram received them. */
  flush(): void {
    const calls = this.tg.calls.filter((c) => c.seq > this.since && c.ok)
    if (!this.quiet) for (const c of calls) this.render(c)
    this.since = this.tg.mark()
  }

  private render(c: RecordedCall): void {
    const shown = this.shown(c)
    if (shown) this.print(shown[0], shown[1])
  }

  /** Who sees the call's effect and how it reads to them; undefined for calls nobody sees. */
  private shown(c: RecordedCall): [string, string] | undefined {
    const p = c.payload
    const chat = Number(p.chat_id)
    let thread = p.message_thread_id !== undefined ? Number(p.message_thread_id) : undefined
    switch (c.method) {
      case 'sendMessage':
        return [this.where(chat, thread), `${p.text}${this.buttons(p.reply_markup)}`]
      case 'copyMessage':
        return [this.where(chat, thread), `${this.describe(chat, c.result.message_id)}   (copy)`]
      case 'copyMessages':
        return [
          this.where(chat, thread),
          (c.result as { message_id: number }[]).map((r) => this.describe(chat, r.message_id)).join('\n'),
        ]
      case 'editMessageText':
        // An edit names no thread: the edited message says where it is.
        thread ??= this.tg.message(chat, Number(p.message_id))?.message_thread_id
        return [this.where(chat, thread), `✎ ${p.text}${this.buttons(p.reply_markup)}`]
      case 'createInvoiceLink':
        return [
          'bot ▸ Telegram',
          `createInvoiceLink “${p.title}” ${p.prices?.[0]?.amount} ⭐${p.subscription_period ? `, subscription_period ${p.subscription_period}` : ' (one-off)'}`,
        ]
      case 'editUserStarSubscription':
        return ['bot ▸ Telegram', `editUserStarSubscription(is_canceled: ${p.is_canceled})`]
      case 'sendInvoice':
        return [this.where(chat, thread), `🧾 invoice “${p.title}”: ${p.prices?.[0]?.amount} ⭐`]
      case 'answerPreCheckoutQuery':
        return [`bot ▸ ${this.client.first_name}`, '✔ pre-checkout approved (Telegram takes the Stars)']
      case 'answerCallbackQuery':
        return p.text ? [`bot ▸ ${this.lastActor}`, `💬 pop-up: ${p.text}`] : undefined
      case 'setMessageReaction':
        return [this.where(chat, undefined), `${p.reaction?.[0]?.emoji ?? ''} on the message (received)`]
      case 'createForumTopic':
        return ['bot ▸ staff group', `🗂 new topic #${c.result.message_thread_id} “${p.name}”`]
      case 'editForumTopic':
        return [this.where(chat, thread), `🗂 topic renamed “${p.name}”`]
      case 'closeForumTopic':
        return [this.where(chat, thread), '🗂 topic closed']
      case 'pinChatMessage':
        return ['bot ▸ staff group', '📌 the client card is pinned in the topic']
      case 'sendDocument': {
        const f = p.document as RecordedFile
        const body = f.data?.toString('utf8').trimEnd() ?? ''
        const lines = body.split('\n').map((l) => `│ ${l}`)
        return [
          this.where(chat, thread),
          `📎 ${f.filename} (${f.size} bytes) — ${p.caption ?? ''}\n${lines.join('\n')}`,
        ]
      }
      default:
        return undefined
    }
  }
}
