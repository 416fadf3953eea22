import { Composer } from 'grammy'
import { deskRole, isAdminRole, isStaffRole } from '../../config/access'
import { admitClientMessage } from '../../consultations/admission'
import { recordEditedMessage } from '../../consultations/answers'
import { tellUnknownCommand } from '../../consultations/refusal-told'
import { isCommand, unknownCommandHelp } from '../commands'
import type { BotContext } from '../context'

/**
 * The client's side of the desk: every message in the private chat that no earlier feature took (commands,
 * payments, conversations) is a question for the expert. The handler only unpacks the update and calls the
 * admission; the copy to the topic, the receipt and any refusal leave through the outbox.
 */
export const deskFeature = new Composer<BotContext>()
const priv = deskFeature.chatType('private')

priv.on('message', async (ctx) => {
  const { deps, desk } = ctx
  const m = ctx.message
  if (isCommand(ctx)) {
    // A command nobody handles is not a question; said once per chat in a few minutes, not once per message, with
    // the commands of the asker (a client's, or a staff member's in their private chat) and the nearest one.
    const role = deskRole(desk, ctx.from?.id ?? 0)
    const audience = isAdminRole(role) ? 'admin' : isStaffRole(role) ? 'staff' : 'client'
    await tellUnknownCommand(deps, {
      botId: desk.botId,
      chatId: m.chat.id,
      messageId: m.message_id,
      lang: ctx.lang,
      params: unknownCommandHelp(ctx, audience, 'private'),
    })
    return
  }
  // A failure (the database away, a transaction that failed) goes up to the inbox, which hands the message over
  // again later: nothing was stored or counted, and the client is not asked to send it again.
  const r = await admitClientMessage(deps, desk, { message: m, lang: ctx.lang })
  if (r.status === 'refused') ctx.log.info({ reason: r.refusal.reason }, 'client message refused')
})

priv.on('edited_message', async (ctx) => {
  await recordEditedMessage(ctx.deps, ctx.desk, ctx.editedMessage)
})
