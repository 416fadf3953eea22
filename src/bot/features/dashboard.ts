import { Composer } from 'grammy'
import { isStaffGroup } from '../../config/staff-groups'
import { reportDashboardButton, setMenuButton, webAppButton } from '../../dashboard/links'
import { isStaffHere } from '../access'
import type { BotContext } from '../context'

/**
 * /dashboard for staff: in a private chat, the Mini App button (inline, and the chat's menu button, for a staff
 * member who opened the chat after the app started); in the staff group, the Mini App's direct link. Read-only.
 */
export const dashboardFeature = new Composer<BotContext>()

dashboardFeature.chatType('private').command('dashboard', async (ctx) => {
  const { deps, desk } = ctx
  if (!isStaffHere(ctx)) return ctx.reply(ctx.t('dashboard-staff-only'))
  const button = webAppButton(deps.config, desk, ctx.t('dashboard-open'))
  if (!button) return ctx.reply(ctx.t('dashboard-not-configured'))
  await setMenuButton(ctx.api, deps, desk, ctx.from.id)
  await ctx.reply(ctx.t('dashboard-here'), { reply_markup: { inline_keyboard: button } })
})

dashboardFeature
  .filter((ctx) => isStaffGroup(ctx.desk, ctx.chat?.id))
  .command('dashboard', async (ctx) => {
    const { deps, desk } = ctx
    const t = (key: string) => deps.i18n.t(desk.defaultLanguage, key)
    const m = ctx.msg
    const thread = m.is_topic_message && m.message_thread_id ? { message_thread_id: m.message_thread_id } : {}
    if (!isStaffHere(ctx)) return ctx.reply(t('dashboard-staff-only'), thread)
    const button = reportDashboardButton(deps.config, desk, ctx.me.username, t('dashboard-open'))
    if (!button) return ctx.reply(t('dashboard-not-configured'), thread)
    await ctx.reply(t('dashboard-here'), { ...thread, reply_markup: { inline_keyboard: button } })
  })
