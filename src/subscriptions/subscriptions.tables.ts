import type { Generated } from 'kysely'

/** Support plans paid by a Stars subscription (migrations/2026-12-01T0400_subscriptions.ts). */
export type SubscriptionState = 'active' | 'lapsed' | 'refunded'

export interface SubscriptionTables {
  subscription: {
    id: Generated<number>
    bot_id: number
    user_id: number
    order_id: number
    consultation_id: number
    plan_code: string
    /** A downgrade (or any change) recorded now, applied at the next renewal. */
    next_plan_code: string | null
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
