import type { InlineKeyboardMarkup } from 'grammy/types'
import { insertItemOnce } from './messages.repository'
import type { Direction } from './routing.tables'

/** Adds a bot-authored item to a lane (once per dedupe key). The caller wakes the lane. */
export async function insertNote(
  trx: Parameters<typeof insertItemOnce>[0],
  v: { id: number; bot_id: number },
  dir: Direction,
  key: string,
  params: Record<string, string | number>,
  dedupeKey: string,
  markup?: InlineKeyboardMarkup,
): Promise<boolean> {
  const r = await insertItemOnce(trx, {
    bot_id: v.bot_id,
    consultation_id: v.id,
    direction: dir,
    kind: 'note',
    content_type: 'note',
    content: JSON.stringify({ key, params, ...(markup ? { markup } : {}) }),
    state: 'pending',
    dedupe_key: dedupeKey,
  })
  return r !== undefined
}
