import type { Message } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  activeConsultation,
  clientSends,
  type DeskWorld,
  itemIn,
  newClient,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * /paysupport's reason step (issue 23): it says what it waits for (a reply to its prompt) and how to leave it (a
 * Cancel button, /cancel); a client with an active consultation who writes without replying is asking their expert,
 * and the question goes to the topic; the reply opens the ticket, a long one cut before an emoji, never through it.
 */

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld()
})
afterAll(() => w?.stop())

const reply = (m: { message: Message }) => m.message as NonNullable<Message['reply_to_message']>

async function askReason(client: ReturnType<DeskWorld['tg']['user']>) {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/paysupport'))
  const ask = await w.tg.waitForSent(client.id, /ps:other|payment/i, { since })
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'ps:other', ask))
  const prompt = await w.tg.waitForSent(
    client.id,
    /describe the problem in one message, as a reply to this message/,
    {
      since,
    },
  )
  expect(prompt.reply_markup).toMatchObject({ force_reply: true })
  // The way out: the question's message keeps only its Cancel button.
  await w.tg.waitFor(
    'editMessageReplyMarkup',
    (p) => p.chat_id === client.id && JSON.stringify(p.reply_markup ?? {}).includes('ps:cancel'),
  )
  return { prompt, since }
}

describe('the /paysupport reason step lets questions through', () => {
  it('a text that is not a reply goes to the expert; the reply opens the ticket (cut before an emoji at 1,500)', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { consultationId } = await activeConsultation(w, client)
    const { prompt, since } = await askReason(client)

    const q = await clientSends(w, client, 'QUESTION for my expert while /paysupport waits')
    const item = await itemIn(w, client.id, q.message_id, 'sent')
    expect(item.consultation_id).toBe(consultationId)
    expect(
      await w.deps.db.selectFrom('dispute').selectAll().where('user_id', '=', client.id).execute(),
    ).toHaveLength(0)

    const long = `${'r'.repeat(1499)}😀${'s'.repeat(300)}`
    await clientSends(w, client, { text: long, reply_to_message: reply(prompt) })
    await w.tg.waitForSent(client.id, /Your ticket no\. \d+ is open/, { since })
    const [d] = await w.deps.db.selectFrom('dispute').selectAll().where('user_id', '=', client.id).execute()
    expect(d?.reason).toBe('r'.repeat(1499))
  })

  it('the Cancel button ends the step: no ticket, and the next text is a question again', async () => {
    const client = await newClient(w, { language_code: 'en' })
    await activeConsultation(w, client)
    const { prompt } = await askReason(client)
    const cancel = w.tg.callback(client, 'ps:cancel')
    await w.tg.push(TEST_BOT_ID, cancel)
    const answered = await w.tg.waitFor('answerCallbackQuery', {
      callback_query_id: cancel.callback_query!.id,
    })
    expect(answered.payload.text).toMatch(/^Cancelled\./)
    const q = await clientSends(w, client, { text: 'Not a reason any more', reply_to_message: reply(prompt) })
    await itemIn(w, client.id, q.message_id, 'sent')
    expect(
      await w.deps.db.selectFrom('dispute').selectAll().where('user_id', '=', client.id).execute(),
    ).toHaveLength(0)
  })
})
