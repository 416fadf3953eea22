import type { Generated } from 'kysely'

export type WaitlistState = 'waiting' | 'notified' | 'bought' | 'left' | 'lapsed'

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
    /**
     * waiting (in line), notified (told; a place held on `order_id` until `hold_until`), bought (the client paid
     * for the slot), left (the client left the line), lapsed (the hold ended unbought; the place passed on).
     */
    state: Generated<WaitlistState>
    created_at: Generated<Date>
    notified_at: Date | null
    order_id: number | null
    hold_until: Date | null
    closed_at: Date | null
  }
}
