import { Composer } from 'grammy'
import { deskRole, isAdminRole, isStaffRole } from '../../config/access'
import { queueOf, renderQueue } from '../../experts/queue'
import type { BotContext } from '../context'

/**
 * /mine in private chat with the bot, for staff: their open questions by due time, each a link into its topic (an
 * expert: the consultations they own; an admin: the whole desk). A client gets the desk's usual answer to an
 * unknown command (the update passes on). Read-only, so it answers directly.
 */
export const mineFeature = new Composer<BotContext>()

mineFeature.chatType('private').command('mine', async (ctx, next) => {
  const { deps, desk } = ctx
  const role = deskRole(desk, ctx.from.id)
  if (!isStaffRole(role)) return next()
  const admin = isAdminRole(role)
  const q = await queueOf(deps.db, desk, { userId: ctx.from.id, admin })
  const { text, entities } = renderQueue((k, p) => deps.i18n.t(ctx.lang, k, p), ctx.lang, q, admin)
  await ctx.reply(text, { entities, link_preview_options: { is_disabled: true } })
})
