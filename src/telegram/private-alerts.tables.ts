import type { Generated } from 'kysely'

export interface PrivateAlertTables {
  /** One private alert to a desk's owner and admins per event (src/telegram/private-alerts.ts). */
  private_alert: {
    bot_id: number
    alert_key: string
    created_at: Generated<Date>
  }
}
