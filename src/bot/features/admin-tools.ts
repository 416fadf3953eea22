import { Composer, GrammyError, InlineKeyboard } from 'grammy'
import { DateTime } from 'luxon'
import { isStaffGroup } from '../../config/staff-groups'
import {
  banById,
  bannedClients,
  grantQuestions,
  reopenConsultation,
  setZoneByAdmin,
  writeToClient,
} from '../../consultations/admin-tools'
import { agreeStart, waitingStarts } from '../../consultations/start.service'
import { roleOf } from '../../dashboard/access'
import { deadLetters, handBackDeadLetter, handBackParked, parkedUpdates } from '../../jobs/handback'
import { starsOverview } from '../../payments/stars'
import { cut } from '../../text'
import { formatInstant, staffZone } from '../../time/format'
import type { BotContext } from '../context'
import { say } from './admin-payments'

/**
 * Admin tools from Telegram (issue 25), in a private chat with the bot or in a staff group outside consultation
 * topics (a topic's own commands are the staff feature's). Admins only: an expert is told why, anyone else gets the
 * desk's usual answer to an unknown command. Handlers unpack, call one service, render.
 *
 * - /startdate [order YYYY-MM-DD [HH:MM]]: paid orders waiting for a start date, each with its next free starts as
 *   buttons, or the admin's own date (desk time) to confirm; the press calls agreeStart(asAdmin) (adm:sd).
 * - /grant <consultation> [n]: n more questions (default 1). /reopen <consultation> [hours]: see reopenConsultation.
 * - /ban <user id>, /unban <user id>, /bans (with Unban buttons, adm:ub).
 * - /tz <user id> <IANA zone>. /write <user id> <text>: a message from the desk.
 * - /stuck: parked updates and dead letters, each with a button to hand it back (adm:pk, adm:dl).
 * - /stars: the bot's Stars balance, what is withdrawable, recent transactions.
 *
 * A command that changes something is claimed by its update id with its effects; a button's action is a
 * conditional change of the row it names, so a second press finds nothing to do and says so. The role is checked
 * here against the desk as this process sees it, and again by each service in its transaction (NOT_ADMIN_NOW).
 */
export const adminToolsFeature = new Composer<BotContext>()

const COMMANDS = [
  'startdate',
  'grant',
  'reopen',
  'ban',
  'unban',
  'bans',
  'tz',
  'write',
  'stuck',
  'stars',
] as const

/** Private chats and the desk's staff groups; a staff group's consultation topics never get here (staff feature). */
const where = adminToolsFeature.filter(
  (ctx) => ctx.chat?.type === 'private' || isStaffGroup(ctx.desk, ctx.chat?.id),
)

const thread = (ctx: BotContext) => {
  const m = ctx.msg ?? ctx.callbackQuery?.message
  const t = m && 'message_thread_id' in m ? m.message_thread_id : undefined
  return t ? { message_thread_id: t } : {}
}
const answer = (ctx: BotContext, text: string, kb?: InlineKeyboard) =>
  ctx.reply(text, {
    ...thread(ctx),
    ...(kb ? { reply_markup: kb } : {}),
    link_preview_options: { is_disabled: true },
  })

/**
 * What an admin is told when the write finds they are no longer the desk's owner or an admin: the command or button
 * passed the check at press time, against the desk as this process last saw it; each service checks again in its
 * transaction against the committed staff, and changes nothing.
 */
const NOT_ADMIN_NOW = 'adm-no-longer-admin'

/** Who presses or writes: the admin's label for topic notes, or why not. */
function actor(ctx: BotContext): { id: number; label: string } | 'expert' | undefined {
  const u = ctx.from
  if (!u || u.is_bot) return undefined
  const role = roleOf(ctx.desk, u.id)
  if (role === 'expert') return 'expert'
  if (role !== 'admin') return undefined
  return { id: u.id, label: [u.first_name, u.last_name].filter(Boolean).join(' ') || `id ${u.id}` }
}

where.command([...COMMANDS], async (ctx, next) => {
  const who = actor(ctx)
  if (!who) return next()
  if (who === 'expert') return answer(ctx, say(ctx)('adm-admins-only'))
  const args = ctx.match.trim()
  const name = (ctx.message?.text ?? '').slice(1).split(/[\s@]/)[0]?.toLowerCase()
  const updateId = ctx.update.update_id
  const t = say(ctx)
  switch (name) {
    case 'startdate':
      return startDate(ctx, args)
    case 'grant': {
      const m = /^#?(\d{1,15})(?:\s+(\d{1,2}))?$/.exec(args)
      const count = Number(m?.[2] ?? 1)
      if (!m || count < 1 || count > 20) return answer(ctx, t('adm-grant-usage'))
      const consultation = m[1]!
      const r = await grantQuestions(ctx.deps, ctx.desk, {
        consultationId: Number(consultation),
        count,
        actorId: who.id,
        actorLabel: who.label,
        updateId,
      })
      if (r.status === 'duplicate') return
      if (r.status === 'forbidden') return answer(ctx, t(NOT_ADMIN_NOW))
      if (r.status === 'granted') return answer(ctx, t('adm-granted', { consultation, count, left: r.left }))
      if (r.status === 'unknown') return answer(ctx, t('adm-unknown-consultation', { consultation }))
      return answer(ctx, t('adm-not-active', { consultation, state: r.state }))
    }
    case 'reopen': {
      const m = /^#?(\d{1,15})(?:\s+(\d{1,4}))?$/.exec(args)
      const hours = Number(m?.[2] ?? 24)
      if (!m || hours < 1 || hours > 24 * 90) return answer(ctx, t('adm-reopen-usage'))
      const consultation = m[1]!
      const r = await reopenConsultation(ctx.deps, ctx.desk, {
        consultationId: Number(consultation),
        hours,
        actorId: who.id,
        actorLabel: who.label,
        updateId,
      })
      if (r.status === 'duplicate') return
      if (r.status === 'forbidden') return answer(ctx, t(NOT_ADMIN_NOW))
      if (r.status === 'reopened')
        return answer(ctx, t('adm-reopened', { consultation, end: deskTime(ctx, r.accessUntil) }))
      if (r.status === 'unknown') return answer(ctx, t('adm-unknown-consultation', { consultation }))
      if (r.status === 'plan') return answer(ctx, t('adm-reopen-plan', { consultation }))
      return answer(ctx, t('adm-not-closed', { consultation, state: r.state }))
    }
    case 'ban':
    case 'unban': {
      const m = /^(\d{1,15})$/.exec(args)
      if (!m) return answer(ctx, t('adm-ban-usage', { cmd: name }))
      return answer(ctx, await ban(ctx, who, Number(m[1]), name === 'ban'))
    }
    case 'bans': {
      const list = await bannedClients(ctx.deps, ctx.desk)
      if (list.length === 0) return answer(ctx, t('adm-bans-none'))
      const kb = new InlineKeyboard()
      for (const b of list)
        kb.text(t('adm-btn-unban', { user: String(b.userId) }), `adm:ub:${b.userId}`).row()
      const lines = list.map((b) =>
        t('adm-bans-item', { user: String(b.userId), name: cut(b.name, 64), at: deskTime(ctx, b.bannedAt) }),
      )
      return answer(ctx, [t('adm-bans-title', { count: list.length }), ...lines].join('\n'), kb)
    }
    case 'tz': {
      const m = /^(\d{1,15})\s+([A-Za-z_]{1,32}(?:\/[A-Za-z0-9_+-]{1,32}){0,2})$/.exec(args)
      if (!m) return answer(ctx, t('adm-tz-usage'))
      const user = m[1]!
      const zone = m[2]!
      const r = await setZoneByAdmin(ctx.deps, ctx.desk, {
        userId: Number(user),
        zone,
        actorId: who.id,
        updateId,
      })
      if (r.status === 'forbidden') return answer(ctx, t(NOT_ADMIN_NOW))
      if (r.status === 'set') return answer(ctx, t('adm-tz-set', { user, zone }))
      if (r.status === 'unchanged') return answer(ctx, t('adm-tz-unchanged', { user, zone }))
      if (r.status === 'bad-zone') return answer(ctx, t('adm-tz-bad', { zone }))
      return answer(ctx, t('adm-unknown-client', { user }))
    }
    case 'write': {
      const m = /^(\d{1,15})\s+([\s\S]+)$/.exec(args)
      if (!m) return answer(ctx, t('adm-write-usage'))
      const user = m[1]!
      const r = await writeToClient(ctx.deps, ctx.desk, {
        userId: Number(user),
        text: m[2]!.trim(),
        actorId: who.id,
        updateId,
      })
      if (r.status === 'duplicate') return
      if (r.status === 'forbidden') return answer(ctx, t(NOT_ADMIN_NOW))
      return answer(ctx, t(r.status === 'queued' ? 'adm-written' : 'adm-unknown-client', { user }))
    }
    case 'stuck':
      return stuck(ctx)
    case 'stars':
      return stars(ctx)
  }
})

async function ban(ctx: BotContext, who: { id: number; label: string }, userId: number, banned: boolean) {
  const r = await banById(ctx.deps, ctx.desk, { userId, banned, actorId: who.id, actorLabel: who.label })
  const user = String(userId)
  const key =
    r.status === 'forbidden'
      ? NOT_ADMIN_NOW
      : r.status === 'unknown-client'
        ? 'adm-unknown-client'
        : r.status === 'done'
          ? banned
            ? 'adm-banned'
            : 'adm-unbanned'
          : banned
            ? 'adm-already-banned'
            : 'adm-not-banned'
  return say(ctx)(key, { user })
}

function deskTime(ctx: BotContext, at: Date): string {
  return formatInstant(
    at,
    staffZone(ctx.desk),
    ctx.chat?.type === 'private' ? ctx.lang : ctx.desk.defaultLanguage,
  )
}

/** /startdate: the waiting orders with their free starts, or (order and date given) a start to confirm. */
async function startDate(ctx: BotContext, args: string) {
  const t = say(ctx)
  if (args) {
    const m = /^#?(\d{1,15})\s+(\d{4}-\d{2}-\d{2})(?:\s+(\d{1,2}:\d{2}))?$/.exec(args)
    if (!m) return answer(ctx, t('adm-startdate-usage'))
    const zone = ctx.desk.schedule.timezone
    const at = DateTime.fromFormat(`${m[2]} ${m[3] ?? '00:00'}`, 'yyyy-MM-dd H:mm', { zone })
    if (!at.isValid) return answer(ctx, t('adm-startdate-usage'))
    const [w] = await waitingStarts(ctx.deps, ctx.desk, { orderId: Number(m[1]) })
    if (!w) return answer(ctx, t('adm-start-why', { order: m[1]!, code: 'not-waiting' }))
    const sec = Math.floor(at.toMillis() / 1000)
    const kb = new InlineKeyboard()
      .text(t('adm-btn-start-at', { at: deskTime(ctx, at.toJSDate()) }), `adm:sd:${w.orderId}:${sec}`)
      .text(t('adm-btn-cancel'), 'adm:no')
    return answer(
      ctx,
      t('adm-startdate-confirm', {
        order: String(w.orderId),
        title: w.title,
        at: deskTime(ctx, at.toJSDate()),
      }),
      kb,
    )
  }
  const list = await waitingStarts(ctx.deps, ctx.desk)
  if (list.length === 0) return answer(ctx, t('adm-startdate-none'))
  const kb = new InlineKeyboard()
  const lines = [t('adm-startdate-title', { count: list.length })]
  for (const w of list) {
    lines.push(
      t(w.options.length ? 'adm-startdate-item' : 'adm-startdate-item-full', {
        order: String(w.orderId),
        title: w.title,
        user: String(w.userId),
      }),
    )
    for (const at of w.options)
      kb.text(
        t('adm-btn-order-start-at', { order: String(w.orderId), at: deskTime(ctx, at) }),
        `adm:sd:${w.orderId}:${Math.floor(at.getTime() / 1000)}`,
      ).row()
  }
  lines.push('', t('adm-startdate-own'))
  return answer(ctx, lines.join('\n'), kb)
}

/** Buttons: refused to an expert with the reason, ignored for anyone else (the fallback says it is stale). */
const buttons = adminToolsFeature.filter((ctx) => !!ctx.callbackQuery?.data?.startsWith('adm:'))

buttons.callbackQuery(/^adm:/, async (ctx, next) => {
  const who = actor(ctx)
  if (who === 'expert') return ctx.answerCallbackQuery({ text: ctx.t('adm-admins-only'), show_alert: true })
  if (!who) return ctx.answerCallbackQuery({ text: ctx.t('admin-only'), show_alert: true })
  return next()
})

buttons.callbackQuery('adm:no', async (ctx) => {
  await ctx.answerCallbackQuery()
  await ctx.editMessageText(say(ctx)('adm-cancelled')).catch(() => {})
})

buttons.callbackQuery(/^adm:sd:(\d{1,15}):(\d{1,12})$/, async (ctx) => {
  const order = ctx.match[1]!
  const r = await agreeStart(ctx.deps, ctx.desk, {
    orderId: Number(order),
    actorId: ctx.from.id,
    asAdmin: true,
    at: new Date(Number(ctx.match[2]) * 1000),
    attempt: `u${ctx.update.update_id}`,
  })
  const t = say(ctx)
  const text = r.ok
    ? t(r.status === 'activated' ? 'adm-start-activated' : 'adm-start-scheduled', {
        order,
        at: deskTime(ctx, r.startsAt),
      })
    : r.code === 'not-admin'
      ? t(NOT_ADMIN_NOW)
      : t('adm-start-why', { order, code: r.code })
  await ctx.answerCallbackQuery()
  await ctx.editMessageText(text).catch(() => answer(ctx, text))
})

buttons.callbackQuery(/^adm:ub:(\d{1,15})$/, async (ctx) => {
  const who = actor(ctx) as { id: number; label: string }
  const text = await ban(ctx, who, Number(ctx.match[1]), false)
  await ctx.answerCallbackQuery({ text: cut(text, 200) })
})

buttons.callbackQuery(/^adm:pk:(\d{1,15})$/, async (ctx) => {
  const update = ctx.match[1]!
  const r = await handBackParked(ctx.deps.db, {
    botId: ctx.desk.botId,
    updateId: Number(update),
    actorId: ctx.from.id,
  })
  const key =
    r === 'handed-back'
      ? 'adm-handed-back-update'
      : r === 'forbidden'
        ? NOT_ADMIN_NOW
        : 'adm-not-waiting-update'
  await ctx.answerCallbackQuery({ text: say(ctx)(key, { update }), show_alert: r !== 'handed-back' })
})

buttons.callbackQuery(/^adm:dl:([0-9a-f-]{36})$/, async (ctx) => {
  const r = await handBackDeadLetter(ctx.deps.jobs, ctx.deps.db, {
    botId: ctx.desk.botId,
    jobId: ctx.match[1]!,
    actorId: ctx.from.id,
  })
  await ctx.answerCallbackQuery({
    text:
      r.status === 'handed-back'
        ? say(ctx)('adm-handed-back-job', { queue: r.queue })
        : say(ctx)(r.status === 'forbidden' ? NOT_ADMIN_NOW : 'adm-not-waiting-job'),
    show_alert: r.status !== 'handed-back',
  })
})

/** /stuck: what waits for a person, each with a button to hand it back. */
async function stuck(ctx: BotContext) {
  const t = say(ctx)
  const parked = await parkedUpdates(ctx.deps.db, ctx.desk.botId)
  const dead = await deadLetters(ctx.deps.db, ctx.desk.botId)
  if (parked.length === 0 && dead.length === 0) return answer(ctx, t('adm-stuck-none'))
  const kb = new InlineKeyboard()
  const lines: string[] = []
  if (parked.length) lines.push(t('adm-stuck-parked-title', { count: parked.length }))
  for (const p of parked) {
    lines.push(
      t('adm-stuck-parked-item', {
        update: String(p.updateId),
        kind: p.kind,
        error: cut(p.lastError ?? '—', 200),
      }),
    )
    kb.text(t('adm-btn-retry-update', { update: String(p.updateId) }), `adm:pk:${p.updateId}`).row()
  }
  if (dead.length) lines.push(t('adm-stuck-dead-title', { count: dead.length }))
  for (const d of dead) {
    lines.push(t('adm-stuck-dead-item', { queue: d.queue, job: d.id, error: cut(d.error ?? '—', 200) }))
    kb.text(t('adm-btn-retry-job', { queue: d.queue }), `adm:dl:${d.id}`).row()
  }
  return answer(ctx, lines.join('\n'), kb)
}

/** /stars: Telegram's figures, asked now; Telegram's own error description when it refuses. */
async function stars(ctx: BotContext) {
  const t = say(ctx)
  try {
    const s = await starsOverview(ctx.deps, ctx.desk)
    const lines = [
      t('adm-stars', { balance: s.balance, withdrawable: s.withdrawable, held: s.held, days: s.holdDays }),
      '',
      s.recent.length ? t('adm-stars-recent', { count: s.recent.length }) : t('adm-stars-none'),
      ...s.recent.map((l) =>
        t('adm-stars-line', {
          date: deskTime(ctx, l.date),
          amount: l.amount > 0 ? `+${l.amount}` : String(l.amount),
          user: l.userId === null ? '—' : String(l.userId),
          kind: l.kind || '—',
        }),
      ),
    ]
    return answer(ctx, lines.join('\n'))
  } catch (err) {
    if (!(err instanceof GrammyError)) throw err
    return answer(ctx, t('adm-stars-failed', { description: cut(err.description, 300) }))
  }
}
