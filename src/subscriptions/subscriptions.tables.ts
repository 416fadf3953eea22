import type { Generated, JSONColumnType } from 'kysely'
import type { PlanConfig } from '../config/schema'

/**
 * Support plans paid by a Stars subscription (migrations/2026-12-01T0400_subscriptions.ts, 2026-12-01T2210_plan_links).
 * replaced: a change of plan was paid; the new subscription (replaced_by) continues on the same consultation.
 */
export type SubscriptionState = 'active' | 'lapsed' | 'refunded' | 'replaced'

export interface SubscriptionTables {
  subscription: {
    id: Generated<number>
    bot_id: number
    user_id: number
    order_id: number
    consultation_id: number
    plan_code: string
    /** Unused since issue 22 (a change of plan is a new subscription); kept for old rows. */
    next_plan_code: string | null
    /** The subscription's own price: its link's, charged at every renewal (a renewal of another amount grants nothing). */
    price_stars: number
    /** The subscription this one replaced (a change of plan), and the one that replaced it. */
    replaces: number | null
    replaced_by: number | null
    replaced_at: Date | null
    terms_version: string
    state: Generated<SubscriptionState>
    renewal_cancelled: Generated<boolean>
    /** The charge id of the first payment: the subscription's id for editUserStarSubscription. */
    first_charge_id: string
    last_charge_id: string
    /** subscription_expiration_date of the last payment. */
    expires_at: Date | null
    lapsed_at: Date | null
    refunded_at: Date | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  /** One per plan link (its order): the price fixed in the link and the plan as sold (a renewal grants this). */
  subscription_link: {
    order_id: number
    bot_id: number
    plan_code: string
    price_stars: number
    plan: JSONColumnType<PlanConfig, string, string>
    /** A change of plan: the subscription this link replaces once paid. */
    replaces_subscription_id: number | null
    /** A change of plan: the replaced subscription's paid time ended here when the offer was shown (the new start). */
    paid_until: Date | null
    created_at: Generated<Date>
  }
  subscription_period: {
    id: Generated<number>
    subscription_id: number
    bot_id: number
    number: number
    charge_id: string
    payment_id: number | null
    plan_code: string
    period_start: Date
    period_end: Date
    account_id: number
    granted: number
    carried: Generated<number>
    created_at: Generated<Date>
  }
  subscription_upgrade: {
    id: Generated<number>
    subscription_id: number
    bot_id: number
    period_id: number
    from_plan: string
    to_plan: string
    charge_id: string
    d_granted: number
    created_at: Generated<Date>
  }
}
