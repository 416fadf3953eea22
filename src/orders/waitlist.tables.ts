import type { Generated } from 'kysely'

export interface WaitlistTables {
  /** A client waiting for a place of a full start (src/orders/waitlist.ts). */
  waitlist_entry: {
    id: Generated<number>
    bot_id: number
    user_id: number
    tariff_code: string
    /** The slot's capacity account key ('slot:<tariff>:<epoch ms>'). */
    capacity_key: string
    slot_start: Date
    lang: string
    state: Generated<'waiting' | 'notified'>
    created_at: Generated<Date>
    notified_at: Date | null
  }
}
