import type { Selectable } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { SubscriptionTables } from './subscriptions.tables'

export type Subscription = Selectable<SubscriptionTables['subscription']>
export type SubscriptionPeriod = Selectable<SubscriptionTables['subscription_period']>
export type SubscriptionLink = Selectable<SubscriptionTables['subscription_link']>

type Q = Db | Trx

/** The client's subscription that is not lapsed or refunded (at most one is sold at a time). */
export function activeSubscriptionOf(q: Q, botId: number, userId: number) {
  return q
    .selectFrom('subscription')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .where('state', '=', 'active')
    .orderBy('id', 'desc')
    .executeTakeFirst()
}

/** The client's latest subscription in any state. */
export function latestSubscriptionOf(q: Q, botId: number, userId: number) {
  return q
    .selectFrom('subscription')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .executeTakeFirst()
}

export function lockSubscription(trx: Trx, id: number) {
  return trx.selectFrom('subscription').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export function lockSubscriptionByOrder(trx: Trx, orderId: number) {
  return trx
    .selectFrom('subscription')
    .selectAll()
    .where('order_id', '=', orderId)
    .forUpdate()
    .executeTakeFirst()
}

export function latestPeriod(q: Q, subscriptionId: number) {
  return q
    .selectFrom('subscription_period')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('number', 'desc')
    .executeTakeFirst()
}

/** The period containing `at`, else the latest one. */
export async function periodAt(
  q: Q,
  subscriptionId: number,
  at: Date,
): Promise<SubscriptionPeriod | undefined> {
  const p = await q
    .selectFrom('subscription_period')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('period_start', '<=', at)
    .where('period_end', '>', at)
    .executeTakeFirst()
  return p ?? latestPeriod(q, subscriptionId)
}

export function periodsOf(q: Q, subscriptionId: number) {
  return q
    .selectFrom('subscription_period')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('number')
    .execute()
}

/** The link (price and plan as sold) of a plan's order. */
export function linkOf(q: Q, orderId: number): Promise<SubscriptionLink | undefined> {
  return q.selectFrom('subscription_link').selectAll().where('order_id', '=', orderId).executeTakeFirst()
}
