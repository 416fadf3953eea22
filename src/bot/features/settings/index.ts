import { Composer } from 'grammy'
import type { Language } from '../../../config/schema'
import { type Edit, editDesk, type GuardedOutcome, isDeskAdmin } from '../../../settings/edit'
import { RULE_FIELDS, type Target, type Weekday } from '../../../settings/fields'
import { deletePlan, unbindGroup } from '../../../settings/removals'
import { type DeskSettings, readDesk } from '../../../settings/settings'
import type { BotContext } from '../../context'
import { askFeature } from './ask'
import { expertsView, groupsView, rulesView, unbindConfirmView } from './desk-views'
import { outcomeText } from './say'
import {
  deleteConfirmView,
  homeView,
  hoursView,
  planListView,
  planView,
  type T,
  tariffListView,
  tariffView,
  textsView,
  type View,
  zonesView,
} from './views'

/**
 * /settings (issue 24, part 5): the owner and admins edit the desk in their private chat with the bot: tariffs
 * (create, edit price/title/questions/window/answer time/capacity/slots/breach and refund policies/top-ups, pause,
 * delete), plans (create, price, title, questions, answer time, refund policy, pause, delete), hours (weekdays,
 * zone, holidays, extra working days), terms and privacy texts, staff groups (unbind), experts' days off, anti-flood,
 * the desk's rules (promises, windows, zones, languages, readiness and retention). Plain inline keyboards (the menu plugin is not
 * installed); typed input in ./ask.ts. Every screen is read from the settings row, every button checks the presser
 * is owner/admin of the desk at press time, and every write (src/settings/edit.ts) is made with the version the
 * button was drawn with and checks the right again inside its transaction.
 */
export const settingsFeature = new Composer<BotContext>()
settingsFeature.use(askFeature)
const priv = settingsFeature.chatType('private')

const tOf =
  (ctx: BotContext): T =>
  (key, params) =>
    ctx.t(key, params)

/** Edit the message a button belongs to; a message too old to edit gets a new one. */
async function show(ctx: BotContext, v: View | undefined): Promise<void> {
  const view = v ?? { text: ctx.t('st-gone'), kb: homeView(tOf(ctx)).kb }
  if (ctx.callbackQuery?.message) {
    try {
      await ctx.editMessageText(view.text, { reply_markup: view.kb })
      return
    } catch {
      // "message is not modified" or too old: send it anew
    }
  }
  await ctx.reply(view.text, { reply_markup: view.kb })
}

async function allowed(ctx: BotContext): Promise<DeskSettings | undefined> {
  const s = await readDesk(ctx.deps.db, ctx.desk.botId)
  return s && ctx.from && isDeskAdmin(s.doc, ctx.from.id) ? s : undefined
}

priv.command('settings', async (ctx) => {
  if (!(await allowed(ctx))) return ctx.reply(ctx.t('st-refused'))
  await ctx.conversation.exitAll()
  const v = homeView(tOf(ctx))
  await ctx.reply(v.text, { reply_markup: v.kb })
})

/** A screen: the button answered, the view drawn from the settings as read. */
function screen(re: RegExp, draw: (ctx: BotContext, s: DeskSettings) => View | undefined): void {
  on(re, async (ctx, s) => {
    await ctx.answerCallbackQuery()
    await show(ctx, draw(ctx, s))
  })
}

type Handler = (ctx: BotContext, s: DeskSettings, m: string[]) => Promise<unknown>

/** A settings button: refused unless the presser is owner/admin of this desk now. */
function on(re: RegExp, h: Handler): void {
  priv.callbackQuery(re, async (ctx) => {
    const s = await allowed(ctx)
    if (!s) return ctx.answerCallbackQuery({ text: ctx.t('st-refused'), show_alert: true })
    await h(ctx, s, [...ctx.match])
  })
}

/** A write from a button: the outcome as a pop-up, then the screen as it is now. */
async function write(
  ctx: BotContext,
  version: number,
  edit: Edit | (() => Promise<GuardedOutcome>),
  redraw: (s: DeskSettings) => View | undefined,
) {
  const out =
    edit.length === 0
      ? await (edit as () => Promise<GuardedOutcome>)()
      : await editDesk(ctx.deps.db, ctx.desk.botId, ctx.from!.id, version, edit as Edit)
  const alert = out.status !== 'done'
  await ctx.answerCallbackQuery({ text: outcomeText(ctx, out, undefined, 'st-done'), show_alert: alert })
  const now = out.status === 'done' || out.status === 'conflict' ? out.settings : await allowed(ctx)
  if (now) await show(ctx, redraw(now))
}

async function enter(ctx: BotContext, id: string, ...args: unknown[]): Promise<void> {
  await ctx.answerCallbackQuery()
  await ctx.conversation.exitAll()
  await ctx.conversation.enter(id, ...args)
}

const lang = (ctx: BotContext): Language => ctx.lang
const CODE = '([a-z0-9][a-z0-9_-]{0,31})'
const V = '(\\d{1,9})'

screen(/^st:home$/, (ctx) => homeView(tOf(ctx)))
screen(/^st:tl$/, (ctx, s) => tariffListView(tOf(ctx), s, lang(ctx)))
on(new RegExp(`^st:t:${CODE}$`), async (ctx, s, m) => {
  await ctx.answerCallbackQuery()
  await show(ctx, tariffView(tOf(ctx), s, m[1]!, lang(ctx)))
})
on(new RegExp(`^st:tp:${CODE}:${V}:([01])$`), (ctx, _s, m) =>
  write(
    ctx,
    Number(m[2]),
    (doc) => {
      const x = doc.tariffs.find((y) => y.code === m[1])
      if (!x) return 'gone'
      x.paused = m[3] === '1'
    },
    (s) => tariffView(tOf(ctx), s, m[1]!, lang(ctx)),
  ),
)
on(new RegExp(`^st:td:${CODE}:${V}$`), async (ctx, s, m) => {
  await ctx.answerCallbackQuery()
  await show(ctx, deleteConfirmView(tOf(ctx), s, m[1]!, lang(ctx)))
})
// Deleting removes the tariff from the document: it is no longer sold, its open invoices are refused at
// pre-checkout, and paid orders keep their snapshot (price, window, terms version) as before.
on(new RegExp(`^st:tD:${CODE}:${V}$`), (ctx, _s, m) =>
  write(
    ctx,
    Number(m[2]),
    (doc) => {
      const i = doc.tariffs.findIndex((y) => y.code === m[1])
      if (i >= 0) doc.tariffs.splice(i, 1)
    },
    (s) => tariffListView(tOf(ctx), s, lang(ctx)),
  ),
)
/** A tariff's field as its button names it (short names keep the callback data under 64 bytes). */
const SHORT: Record<string, string> = {
  sla: 'slaBusinessHours',
  carry: 'carryOver',
  cap: 'dailyCapacity',
  slotCap: 'slotCapacity',
  breach: 'breachPolicy',
  refund: 'refundPolicy',
}
on(
  new RegExp(
    `^st:te:${CODE}:(priceStars|title|appeals|windowHours|sla|cap|slotCap|slots|breach|refund|topUps):${V}$`,
  ),
  (ctx, _s, m) =>
    enter(
      ctx,
      'st-edit',
      { kind: 'tariff', code: m[1]!, field: SHORT[m[2]!] ?? m[2] } as Target,
      Number(m[3]),
    ),
)
on(new RegExp(`^st:tn:${V}$`), (ctx, _s, m) => enter(ctx, 'st-new-tariff', Number(m[1])))

screen(/^st:pl$/, (ctx, s) => planListView(tOf(ctx), s, lang(ctx)))
on(new RegExp(`^st:p:${CODE}$`), async (ctx, s, m) => {
  await ctx.answerCallbackQuery()
  await show(ctx, planView(tOf(ctx), s, m[1]!, lang(ctx)))
})
on(new RegExp(`^st:pp:${CODE}:${V}:([01])$`), (ctx, _s, m) =>
  write(
    ctx,
    Number(m[2]),
    (doc) => {
      const p = doc.plans.find((y) => y.code === m[1])
      if (!p) return 'gone'
      p.paused = m[3] === '1'
    },
    (s) => planView(tOf(ctx), s, m[1]!, lang(ctx)),
  ),
)
on(new RegExp(`^st:pe:${CODE}:(priceStars|title|questions|sla|refund|carry):${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'plan', code: m[1]!, field: SHORT[m[2]!] ?? m[2] } as Target, Number(m[3])),
)
on(new RegExp(`^st:pn:${V}$`), (ctx, _s, m) => enter(ctx, 'st-new-plan', Number(m[1])))
on(new RegExp(`^st:pd:${CODE}:${V}$`), async (ctx, s, m) => {
  await ctx.answerCallbackQuery()
  await show(ctx, deleteConfirmView(tOf(ctx), s, m[1]!, lang(ctx), 'p'))
})
// A plan with live subscribers is not deleted (src/settings/removals.ts): the refusal says how many, and Pause
// is the way to stop selling it while current subscriptions run.
on(new RegExp(`^st:pD:${CODE}:${V}$`), (ctx, _s, m) =>
  write(
    ctx,
    Number(m[2]),
    () => deletePlan(ctx.deps.db, ctx.desk.botId, ctx.from!.id, Number(m[2]), m[1]!),
    (s) => planListView(tOf(ctx), s, lang(ctx)),
  ),
)

on(/^st:af$/, (ctx, s) => enter(ctx, 'st-edit', { kind: 'antiFlood' } as Target, s.version))
screen(/^st:ed$/, (ctx, s) => expertsView(tOf(ctx), s))
screen(/^st:r$/, (ctx, s) => rulesView(tOf(ctx), s))
on(new RegExp(`^st:re:(${RULE_FIELDS.join('|')}):${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'rule', field: m[1] } as Target, Number(m[2])),
)
on(new RegExp(`^st:eo:(\\d{1,15}):${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'daysOff', userId: Number(m[1]) } as Target, Number(m[2])),
)

/** The titles the bot last saw of the desk's groups. */
async function groupTitles(ctx: BotContext): Promise<Map<number, string>> {
  const rows = await ctx.deps.db
    .selectFrom('staff_group_state')
    .select(['chat_id', 'title'])
    .where('bot_id', '=', ctx.desk.botId)
    .execute()
  return new Map(rows.map((r) => [r.chat_id, r.title]))
}
on(/^st:g$/, async (ctx, s) => {
  await ctx.answerCallbackQuery()
  await show(ctx, groupsView(tOf(ctx), s, await groupTitles(ctx)))
})
on(new RegExp(`^st:gu:(-?\\d{1,20}):${V}$`), async (ctx, s, m) => {
  await ctx.answerCallbackQuery()
  const id = Number(m[1])
  await show(ctx, unbindConfirmView(tOf(ctx), s, id, (await groupTitles(ctx)).get(id) ?? String(id)))
})
// Refused while live consultations are routed to the group (src/settings/removals.ts), with their number.
on(new RegExp(`^st:gU:(-?\\d{1,20}):${V}$`), async (ctx, _s, m) => {
  const titles = await groupTitles(ctx)
  await write(
    ctx,
    Number(m[2]),
    () => unbindGroup(ctx.deps.db, ctx.desk.botId, ctx.from!.id, Number(m[2]), Number(m[1])),
    (s) => groupsView(tOf(ctx), s, titles),
  )
})

screen(/^st:h$/, (ctx, s) => hoursView(tOf(ctx), s))
on(new RegExp(`^st:hw:(mon|tue|wed|thu|fri|sat|sun):${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'weekday', day: m[1] as Weekday } as Target, Number(m[2])),
)
screen(/^st:hz$/, (ctx, s) => zonesView(tOf(ctx), s))
// The index is into the desk's zones as drawn: a list changed since changed the version too, and the write refuses.
on(new RegExp(`^st:hZ:(\\d{1,2}):${V}$`), async (ctx, s, m) => {
  const zone = s.doc.rules.zones[Number(m[1])]
  if (!zone) return ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true })
  await write(
    ctx,
    Number(m[2]),
    (doc) => {
      doc.schedule.timezone = zone
    },
    (s) => hoursView(tOf(ctx), s),
  )
})
on(new RegExp(`^st:hh:${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'holiday' } as Target, Number(m[1])),
)
on(new RegExp(`^st:he:${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'extra' } as Target, Number(m[1])),
)
on(new RegExp(`^st:h([xX]):(\\d{4}-\\d{2}-\\d{2}):${V}$`), (ctx, _s, m) =>
  write(
    ctx,
    Number(m[3]),
    (doc) => {
      if (m[1] === 'x') doc.schedule.holidays = doc.schedule.holidays.filter((d) => d !== m[2])
      else delete doc.schedule.extraWorkingDays[m[2]!]
    },
    (s) => hoursView(tOf(ctx), s),
  ),
)

screen(/^st:x$/, (ctx, s) => textsView(tOf(ctx), s))
on(new RegExp(`^st:xe:(terms|privacy):(ru|en):${V}$`), (ctx, _s, m) =>
  enter(ctx, 'st-edit', { kind: 'text', which: m[1], lang: m[2] } as Target, Number(m[3])),
)

// A button of a settings question no longer open, or of a screen whose data no longer parses.
priv.callbackQuery(/^st:/, (ctx) =>
  ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true }),
)
