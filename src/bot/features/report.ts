import { Composer } from 'grammy'
import { isStaffGroup } from '../../config/staff-groups'
import { reportDashboardButton } from '../../dashboard/links'
import { renderOwners } from '../../experts/owners-report'
import { renderReport, reportFor } from '../../reports/reports.service'
import { isAdminHere } from '../access'
import type { BotContext } from '../context'

/**
 * /report in the staff group, for the desk's owner and admins (src/config/access.ts: an anonymous admin too where
 * staff.anonymousAdmins allows it): revenue, consultations by state, SLA numbers, median first response per expert, open questions nearest
 * to breach, refusals; optionally for a date range. Read-only, so it answers directly in the thread it was asked in.
 */
export const reportFeature = new Composer<BotContext>()
const group = reportFeature.filter((ctx) => isStaffGroup(ctx.desk, ctx.chat?.id))

group.command('report', async (ctx) => {
  const { deps, desk } = ctx
  const m = ctx.msg
  const lang = desk.defaultLanguage
  const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(lang, key, p)
  const thread = m.is_topic_message && m.message_thread_id ? { message_thread_id: m.message_thread_id } : {}
  if (!isAdminHere(ctx)) return ctx.reply(t('report-admins-only'), thread)
  const r = await reportFor(deps.db, desk, typeof ctx.match === 'string' ? ctx.match : '', m.chat.id)
  if (!r.ok) return ctx.reply(t('report-usage'), thread)
  const dashboard = reportDashboardButton(deps.config, desk, ctx.me.username, t('dashboard-open'))
  // The owners now (src/experts), after the range's numbers.
  const owners = await renderOwners(deps.db, desk, t, r.now)
  await ctx.reply(`${renderReport(t, desk, r.report, r.now, r.names)}\n\n${owners}`, {
    ...thread,
    link_preview_options: { is_disabled: true },
    ...(dashboard ? { reply_markup: { inline_keyboard: dashboard } } : {}),
  })
})
