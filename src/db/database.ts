import type { Kysely, Transaction } from 'kysely'
import type { ClientTables } from '../clients/clients.tables'
import type { DeskConsultationTables } from '../consultations/desk.tables'
import type { RatingTables } from '../consultations/ratings.tables'
import type { SeveralTables } from '../consultations/several.tables'
import type { DisputeTables } from '../disputes/disputes.tables'
import type { DraftingTables } from '../drafting/drafting.tables'
import type { ExpertTables } from '../experts/experts.tables'
import type { IntakeTables } from '../intake/intake.tables'
import type { InstanceTables } from '../jobs/instances.tables'
import type { LedgerTables } from '../ledger/ledger.tables'
import type { LifecycleTables } from '../lifecycle/lifecycle.tables'
import type { OrderTables } from '../orders/orders.tables'
import type { WaitlistTables } from '../orders/waitlist.tables'
import type { RoutingTables } from '../routing/routing.tables'
import type { SettingsTables } from '../settings/settings.tables'
import type { SetupTables } from '../setup/setup.tables'
import type { SubscriptionTables } from '../subscriptions/subscriptions.tables'
import type { ClientThreadTables } from '../telegram/client-threads.tables'
import type { OutboundTables } from '../telegram/outbound.tables'
import type { PrivateAlertTables } from '../telegram/private-alerts.tables'

/**
 * Every table of the app. Each feature declares its tables next to its code (`*.tables.ts`) and is listed here,
 * so one `Kysely<Database>` types every query.
 */
export interface Database
  extends CoreTables,
    ClientTables,
    OutboundTables,
    OrderTables,
    DisputeTables,
    LedgerTables,
    DeskConsultationTables,
    RatingTables,
    WaitlistTables,
    RoutingTables,
    DraftingTables,
    LifecycleTables,
    IntakeTables,
    InstanceTables,
    ExpertTables,
    SubscriptionTables,
    SettingsTables,
    SetupTables,
    PrivateAlertTables,
    ClientThreadTables,
    SeveralTables {}

export interface CoreTables {
  /** Telegram update ids already handled, written in the same transaction as the update's effects. */
  processed_update: {
    bot_id: number
    update_id: number
    processed_at: import('kysely').Generated<Date>
  }
}

export type Db = Kysely<Database>
export type Trx = Transaction<Database>
