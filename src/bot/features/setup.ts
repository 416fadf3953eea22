import { Composer, InlineKeyboard } from 'grammy'
import { recordStart } from '../../clients/clients.service'
import { claimOwnership } from '../../setup/claim'
import { CLAIM_PREFIX, INVITE_PREFIX } from '../../setup/codes'
import { sellingClosed } from '../../setup/gate'
import { confirmGroup, inspectGroup, knownGroup, recordGroupFacts } from '../../setup/groups'
import { createInvite, joinByInvite } from '../../setup/invites'
import { followMigration } from '../../setup/migrate'
import { changeStaff, listStaff, setOwnName } from '../../setup/staff-admin'
import { isDeskAdmin, isOwner, roleOf } from '../../setup/staff-doc'
import type { BotContext } from '../context'

/**
 * Setting the desk up from Telegram (issue 24; the rules in src/setup):
 * - `/start own_…` (the owner link printed at start) and `/start inv_…` (a staff invite);
 * - my_chat_member in groups: the bot added, its rights changed, or removed (src/setup/groups.ts); added by
 *   someone who is not the desk's owner or admin to a group the desk does not know, it leaves;
 * - sg:use:<chat> "use «title» as the staff group" (owner or admin, checked on press);
 * - /invite expert|admin [people], /staff with st:<admin|expert|rm>:<user> buttons (owner, checked on press),
 *   /myname, /setup (what is left to do);
 * - the gate: while a staff group is broken a client's /tariffs and buy buttons get "not taking new orders"
 *   (a desk not set up yet is refused by the tariff list itself); the owner's and admins' /start shows what is left.
 */
export const setupFeature = new Composer<BotContext>()
const priv = setupFeature.chatType('private')

const START_CODE = new RegExp(`^(${CLAIM_PREFIX}|${INVITE_PREFIX})[A-Za-z0-9_-]{1,60}$`)

priv.command('start', async (ctx, next) => {
  const payload = ctx.match.trim()
  if (!START_CODE.test(payload)) return gate(ctx, next)
  const { deps, desk } = ctx
  if (payload.startsWith(CLAIM_PREFIX)) {
    const r = await claimOwnership(deps.db, desk.botId, payload, ctx.from)
    if (!r.ok) return void (await ctx.reply(ctx.t(`setup-claim-${r.reason}`)))
    await ctx.reply(
      [
        ctx.t(r.already ? 'setup-owner-already' : 'setup-owner-welcome', { name: ctx.from.first_name }),
        '',
        await guide(ctx),
      ].join('\n'),
    )
    return
  }
  const r = await joinByInvite(deps, desk, payload, ctx.from)
  if (!r.ok) return void (await ctx.reply(ctx.t(`setup-join-${r.reason}`)))
  await ctx.reply(
    r.already
      ? ctx.t('setup-join-already', { role: r.role })
      : ctx.t(`setup-join-${r.role}`, { name: ctx.from.first_name }),
  )
})

/** What is left to set up, for the owner and admins. */
async function guide(ctx: BotContext): Promise<string> {
  const desk = ctx.deps.desk(ctx.desk.botId)
  const reasons = await sellingClosed(ctx.deps.db, desk)
  const lines = [ctx.t('setup-guide-title')]
  const hasGroup = desk.staffChatId !== undefined && desk.staffChatId !== null
  lines.push(ctx.t(hasGroup ? 'setup-guide-group-done' : 'setup-guide-group'))
  for (const r of reasons)
    if (r.kind === 'group') lines.push(ctx.t('setup-guide-group-broken', { title: r.title }))
  lines.push(ctx.t(desk.staff.experts.length ? 'setup-guide-invite-done' : 'setup-guide-invite'))
  lines.push(ctx.t(desk.tariffs.length ? 'setup-guide-tariffs-done' : 'setup-guide-tariffs'))
  lines.push('', ctx.t(reasons.length ? 'setup-guide-closed' : 'setup-guide-open'))
  return lines.join('\n')
}

priv.command('setup', async (ctx) => {
  if (!isDeskAdmin(ctx.deps.desk(ctx.desk.botId), ctx.from.id))
    return void (await ctx.reply(ctx.t('setup-admins-only')))
  await ctx.reply(await guide(ctx))
})

// ─────────── the gate: nothing sold while the desk is not open ───────────

async function gate(ctx: BotContext, next: () => Promise<void>): Promise<void> {
  const desk = ctx.deps.desk(ctx.desk.botId)
  const from = ctx.from
  const isStart = ctx.message?.text?.startsWith('/start') === true
  if (from && isDeskAdmin(desk, from.id)) {
    // The owner and admins see what is left to do while the desk sells nothing.
    if (isStart && (await sellingClosed(ctx.deps.db, desk)).length > 0) {
      if (await recordStart(ctx.deps.db, desk.botId, ctx.update.update_id, from))
        await ctx.reply(await guide(ctx))
      return
    }
    return next()
  }
  if (!from || isStart || roleOf(desk, from.id) !== undefined) return next()
  // A desk not set up yet is answered by the tariff list and the order itself (src/settings/setup.ts openForSale);
  // a staff group broken since is answered here: nothing new is sold until it is fixed.
  const broken = (await sellingClosed(ctx.deps.db, desk)).filter((r) => r.kind === 'group')
  if (broken.length === 0) return next()
  if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: ctx.t('setup-not-open'), show_alert: true })
  else if (await recordStart(ctx.deps.db, desk.botId, ctx.update.update_id, from))
    await ctx.reply(ctx.t('setup-not-open'))
}

priv.command(['tariffs'], gate)
priv.callbackQuery(/^(tf:|sub:buy:|sub:list$)/, gate)

// ─────────── staff groups ───────────

setupFeature.on('my_chat_member', async (ctx) => {
  const u = ctx.myChatMember
  if (u.chat.type === 'private' || u.chat.type === 'channel') return
  const { deps } = ctx
  const desk = deps.desk(ctx.desk.botId)
  const chatId = u.chat.id
  const title = u.chat.title
  const status = u.new_chat_member.status
  if (status === 'left' || status === 'kicked') {
    if (!(await knownGroup(deps.db, desk, chatId))) return
    await recordGroupFacts(
      deps,
      desk,
      { chatId, title, present: false, problems: ['gone'] },
      undefined,
      u.from,
    )
    return
  }
  const byAdmin = isDeskAdmin(desk, u.from.id)
  if (!(await knownGroup(deps.db, desk, chatId)) && !byAdmin) {
    // Added by someone who does not run this desk: the bot has nothing to do there and leaves.
    ctx.log.info({ chat_id: chatId, by: u.from.id }, 'added to a group by a stranger: leaving')
    await ctx.api.leaveChat(chatId)
    return
  }
  const facts = await inspectGroup(ctx.api, desk.botId, chatId, title)
  const bound = chatId === desk.staffChatId || (desk.staffGroups ?? []).some((g) => g.chatId === chatId)
  await recordGroupFacts(deps, desk, facts, byAdmin && !bound ? u.from.id : undefined, u.from)
})

// A basic group upgraded to a supergroup has a new id (src/setup/migrate.ts): the desk follows it. Both service
// messages are handled (either may be the one the bot sees first); the second finds nothing left to move.
setupFeature.on('message:migrate_to_chat_id', async (ctx) => {
  const seen = { title: 'title' in ctx.chat ? ctx.chat.title : undefined, actor: ctx.from }
  await followMigration(
    ctx.deps,
    ctx.deps.desk(ctx.desk.botId),
    ctx.chat.id,
    ctx.message.migrate_to_chat_id,
    seen,
  )
})
setupFeature.on('message:migrate_from_chat_id', async (ctx) => {
  await followMigration(
    ctx.deps,
    ctx.deps.desk(ctx.desk.botId),
    ctx.message.migrate_from_chat_id,
    ctx.chat.id,
  )
})

priv.callbackQuery(/^sg:use:(-?\d{1,20})$/, async (ctx) => {
  const chatId = Number(ctx.match[1])
  const r = await confirmGroup(ctx.deps, ctx.deps.desk(ctx.desk.botId), ctx.from.id, chatId)
  const text = r.ok
    ? ctx.t(`setup-group-bound-${r.as}`, { title: r.title })
    : r.reason === 'not-admin'
      ? ctx.t('setup-admins-only')
      : ctx.t(`setup-group-${r.reason}`, { title: r.title ?? '' })
  await ctx.answerCallbackQuery(r.ok ? undefined : { text, show_alert: true })
  if (r.ok) {
    await ctx.editMessageReplyMarkup().catch(() => undefined)
    await ctx.reply(text)
  }
})

// ─────────── invites and the staff list ───────────

priv.command('invite', async (ctx) => {
  const [roleWord, usesWord, ...rest] = ctx.match.trim().split(/\s+/).filter(Boolean)
  const role = roleWord === 'expert' || roleWord === 'admin' ? roleWord : undefined
  const uses = usesWord === undefined ? 1 : /^\d{1,3}$/.test(usesWord) ? Number(usesWord) : Number.NaN
  if (!role || rest.length) return void (await ctx.reply(ctx.t('setup-invite-usage')))
  const desk = ctx.deps.desk(ctx.desk.botId)
  const r = await createInvite(
    ctx.deps,
    desk,
    ctx.from.id,
    role,
    uses,
    ctx.lang,
    ctx.update.update_id,
    ctx.me.username,
  )
  // Created: the link is on its way (the outbox); a redelivered /invite: nothing more.
  if (r.ok || r.reason === 'duplicate') return
  await ctx.reply(ctx.t(r.reason === 'not-admin' ? 'setup-admins-only' : `setup-invite-${r.reason}`))
})

async function staffView(ctx: BotContext): Promise<{ text: string; keyboard: InlineKeyboard }> {
  const desk = ctx.deps.desk(ctx.desk.botId)
  const list = (await listStaff(ctx.deps.db, desk)).map((s) => ({
    ...s,
    name: s.name || ctx.t('setup-staff-unnamed'),
  }))
  const owner = isOwner(desk, ctx.from!.id)
  const kb = new InlineKeyboard()
  const lines = [ctx.t('setup-staff-title')]
  for (const s of list) {
    lines.push(ctx.t('setup-staff-line', { name: s.name, role: s.role }))
    if (!owner || s.role === 'owner') continue
    const other = s.role === 'admin' ? 'expert' : 'admin'
    kb.text(ctx.t(`setup-staff-btn-${other}`, { name: s.name }), `st:${other}:${s.userId}`)
      .text(ctx.t('setup-staff-btn-remove', { name: s.name }), `st:rm:${s.userId}`)
      .row()
  }
  if (list.length <= 1) lines.push('', ctx.t('setup-staff-empty'))
  if (!owner) lines.push('', ctx.t('setup-staff-owner-only'))
  return { text: lines.join('\n'), keyboard: kb }
}

priv.command('staff', async (ctx) => {
  if (roleOf(ctx.deps.desk(ctx.desk.botId), ctx.from.id) === undefined)
    return void (await ctx.reply(ctx.t('setup-admins-only')))
  const v = await staffView(ctx)
  const buttons = v.keyboard.inline_keyboard.flat().length > 0
  await ctx.reply(v.text, buttons ? { reply_markup: v.keyboard } : {})
})

priv.callbackQuery(/^st:(admin|expert|rm):(\d{1,20})$/, async (ctx) => {
  const action = ctx.match[1] === 'rm' ? 'remove' : (ctx.match[1] as 'admin' | 'expert')
  const r = await changeStaff(ctx.deps.db, ctx.desk.botId, ctx.from.id, Number(ctx.match[2]), action)
  if (!r.ok) {
    const text =
      r.reason === 'invalid'
        ? ctx.t('setup-staff-invalid', { detail: r.detail ?? '' })
        : ctx.t(`setup-staff-${r.reason}`)
    return void (await ctx.answerCallbackQuery({ text, show_alert: true }))
  }
  const name = r.name || ctx.t('setup-staff-unnamed')
  await ctx.answerCallbackQuery({ text: ctx.t(`setup-staff-done-${r.action}`, { name }) })
  // The settings change is read back from the database (refreshed in every process within about two seconds):
  // the list drawn now marks the change from the outcome rather than wait for it.
  await ctx.reply(ctx.t(`setup-staff-done-${r.action}`, { name }))
})

priv.command('myname', async (ctx) => {
  const name = ctx.match.trim()
  if (!name) return void (await ctx.reply(ctx.t('setup-myname-usage')))
  const r = await setOwnName(ctx.deps.db, ctx.desk.botId, ctx.from.id, name)
  await ctx.reply(r === 'ok' ? ctx.t('setup-myname-done', { name }) : ctx.t(`setup-myname-${r}`))
})
