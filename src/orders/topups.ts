import type { InlineKeyboardButton, User } from 'grammy/types'
import { audit } from '../audit/audit'
import { isClientBanned } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { TariffConfig } from '../config/schema'
import { claimUpdate } from '../db/once'
import type { Deps, Translator } from '../deps'
import { cut } from '../text'
import { insertOrder, type Order } from './orders.repository'
import { findTariff, snapshotTariff } from './tariffs'

/**
 * Top-ups inside a consultation (issue 14): a tariff's `topUps` (more questions, or more hours of window, for a
 * price in Stars) are offered when the client's questions run out and in the "closes soon" notice, as buttons
 * `tu:<consultation>:<index>`. A press makes an order of kind 'topup' naming the consultation (the usual order ->
 * invoice -> pre-checkout -> successful_payment path); src/payments/topup.ts checks it at pre-checkout and grants
 * its units with the payment.
 */

export type TopUp = TariffConfig['topUps'][number]

/** The offer's buttons for a consultation of `tariffCode` (none when the tariff offers no top-up). */
export function topUpButtons(
  t: Translator,
  desk: DeskRuntime,
  tariffCode: string,
  lang: string,
  consultationId: number,
): InlineKeyboardButton[][] {
  const tariff = findTariff(desk, tariffCode)
  return (tariff?.topUps ?? []).map((u, i) => [
    { text: topUpLabel(t, lang, u, 'topup-button'), callback_data: `tu:${consultationId}:${i}` },
  ])
}

/** "+3 questions — 150 ⭐" (a button), or the invoice title. */
export function topUpLabel(
  t: Translator,
  lang: string,
  u: TopUp,
  key: 'topup-button' | 'topup-title',
): string {
  return u.kind === 'questions'
    ? t(lang, `${key}-questions`, { count: u.questions, price: u.priceStars })
    : t(lang, `${key}-hours`, { count: u.hours, price: u.priceStars })
}

export type CreateTopUpResult =
  | { ok: true; order: Order; topUp: TopUp }
  | { ok: false; code: 'duplicate' | 'unknown' | 'not-active' | 'gone' | 'banned' }

/** A top-up order for the client's active consultation (checked again at pre-checkout and at payment). */
export async function createTopUpOrder(
  deps: Deps,
  desk: DeskRuntime,
  input: { from: User; consultationId: number; index: number; updateId: number },
): Promise<CreateTopUpResult> {
  return deps.db.transaction().execute(async (trx): Promise<CreateTopUpResult> => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { ok: false, code: 'duplicate' }
    const c = await trx
      .selectFrom('consultation as c')
      .innerJoin('orders as o', 'o.id', 'c.order_id')
      .select(['c.id', 'c.bot_id', 'c.user_id', 'c.state', 'o.tariff_code', 'o.lang'])
      .where('c.id', '=', input.consultationId)
      .executeTakeFirst()
    if (!c || c.bot_id !== desk.botId || c.user_id !== input.from.id) return { ok: false, code: 'unknown' }
    if (c.state !== 'active') return { ok: false, code: 'not-active' }
    const tariff = findTariff(desk, c.tariff_code)
    const topUp = tariff?.topUps[input.index]
    if (!tariff || !topUp) return { ok: false, code: 'gone' }
    if (await isClientBanned(trx, desk.botId, input.from.id)) return { ok: false, code: 'banned' }
    const snap = snapshotTariff(desk, tariff, c.lang)
    const title = topUpLabel((l, k, p) => deps.i18n.t(l, k, p), c.lang, topUp, 'topup-title')
    const order = await insertOrder(trx, {
      bot_id: desk.botId,
      user_id: input.from.id,
      ...snap,
      kind: 'topup',
      topup_consultation_id: c.id,
      title: cut(`${title} · ${pick(tariff.title, c.lang, desk.defaultLanguage)}`, 120),
      price_stars: topUp.priceStars,
      topup_questions: topUp.kind === 'questions' ? topUp.questions : 0,
      topup_hours: topUp.kind === 'hours' ? topUp.hours : 0,
      drafts: 0,
      start_mode: 'immediate',
      start_within_days: null,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: input.from.id,
      action: 'order.created',
      subjectType: 'order',
      subjectId: order.id,
      details: { kind: 'topup', consultationId: c.id, topUp, price: topUp.priceStars },
    })
    return { ok: true, order, topUp }
  })
}
