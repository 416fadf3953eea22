import type { Generated, JSONColumnType } from 'kysely'
import type { TariffConfig } from '../config/schema'

export type OrderState =
  | 'created'
  | 'reserved'
  | 'paid_waiting'
  | 'active'
  | 'closed'
  | 'cancelled'
  | 'refunded'
/** What an order buys (migration 2026-12-01T0050); features that sell something else add their kind here. */
export type OrderKind = 'consultation' | 'subscription' | 'subscription_upgrade' | 'topup'
export type ConsultationState = 'waiting' | 'active' | 'closed' | 'revoked'
export type StartMode = TariffConfig['startMode']
export type BreachPolicy = TariffConfig['breachPolicy']
/** overpayment: a second, different payment for an order already paid; unmatched: no order of this desk. */
export type PaymentKind = 'payment' | 'overpayment' | 'unmatched'
/** desk: an automatic refund (a charge for a plan deleted before it came, src/subscriptions/charge-refusal.ts). */
export type RefundSource = 'admin' | 'telegram' | 'dispute' | 'client' | 'desk'
/** Refund policy for questions already accepted when a consultation is refunded. */
export type RefundPolicy = 'deliver' | 'stop'

export interface OrderTables {
  orders: {
    id: Generated<number>
    bot_id: number
    user_id: number
    kind: Generated<OrderKind>
    tariff_code: string
    title: string
    price_stars: number
    window_minutes: number
    appeals: number
    drafts: Generated<number>
    sla_minutes: number
    start_mode: StartMode
    start_within_days: number | null
    breach_policy: JSONColumnType<BreachPolicy, string | undefined, string>
    /** The tariff's refund policy when ordered (what the card promised). */
    refund_policy: Generated<RefundPolicy>
    /** kind 'topup': the consultation the top-up adds to (its questions or its window). */
    topup_consultation_id: number | null
    /** kind 'topup': the questions, or the hours of window, it adds (the other is 0). */
    topup_questions: Generated<number>
    topup_hours: Generated<number>
    terms_version: string
    lang: string
    slot_start: Date | null
    state: Generated<OrderState>
    hold_request_id: string | null
    hold_expires_at: Date | null
    needs_start_date: Generated<boolean>
    invoice_message_id: number | null
    /** 'day:<tariff>:<YYYY-MM-DD>' or 'slot:<tariff>:<epoch ms>': the capacity account the start takes from. */
    capacity_key: string | null
    paid_at: Date | null
    /** on_request: the client may press Start until then. */
    start_by: Date | null
    cancel_reason: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  payment: {
    id: Generated<number>
    bot_id: number
    /** null only for an 'unmatched' payment (a payload that names no order of this desk). */
    order_id: number | null
    user_id: number
    telegram_payment_charge_id: string
    provider_payment_charge_id: string | null
    currency: string
    total_amount: number
    kind: PaymentKind
    invoice_payload: Generated<string>
    refunded_at: Date | null
    refunded_by: number | null
    /** A refundStarPayment call in flight (see the migration). */
    refund_started_at: Date | null
    refund_error: string | null
    refund_source: RefundSource | null
    created_at: Generated<Date>
  }
  consultation: {
    id: Generated<number>
    bot_id: number
    order_id: number
    user_id: number
    state: Generated<ConsultationState>
    starts_at: Date | null
    access_until: Date | null
    revoked_at: Date | null
    closed_at: Date | null
    /** Set on refund: what happens to questions already accepted ('deliver' = answers still delivered). */
    refund_policy: RefundPolicy | null
    /** The staff group its topic lives in, chosen at activation; null: the desk's home group (staffChatId). */
    staff_chat_id: number | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  audit_log: {
    id: Generated<number>
    bot_id: number
    actor_id: number | null
    action: string
    subject_type: string
    subject_id: string
    details: JSONColumnType<Record<string, unknown>, string | undefined, string>
    at: Generated<Date>
  }
}
