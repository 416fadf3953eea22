import type { InlineKeyboardMarkup } from 'grammy/types'
import { sql } from 'kysely'
import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import type { Deps, Translator } from '../deps'
import { currentAssignment } from '../experts/experts.repository'
import { staffNames } from '../experts/names'
import { lockConsultation } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { cut } from '../text'

/**
 * Ratings of a consultation by its client (issue 14). When a consultation closes (its window ends, or the desk ends
 * it), the client's "closed" message carries 1-5 buttons (`rate:<consultation>:<score>`). One rating per
 * consultation (the table's primary key): a second press changes the score, for the desk's rules.ratingEditDays
 * after the first rating; later presses are refused and change nothing. A comment is optional (the bot asks for it after a score).
 * A score of the desk's rules.lowRating or less notifies the admins in the desk's home group (staffChatId, whichever group the
 * consultation lives in) and the consultation's owner (its expert, not the desk's owner) in private, both in the
 * desk's language (through the outbox, in the same transaction), once per move from a good score (or none) to a
 * low one.
 *
 * The rating counts for the consultation's owner when it is rated (its current expert_assignment, src/experts: the
 * one the desk made responsible, whoever typed the answers); a consultation that never had an owner counts for the
 * staff member who answered most of its questions (desk_appeal.answered_by), else for nobody.
 */
export const MAX_COMMENT_LENGTH = 1000

/** The five buttons, in the client's language. */
export function ratingKeyboard(t: Translator, lang: string, consultationId: number): InlineKeyboardMarkup {
  return {
    inline_keyboard: [
      [1, 2, 3, 4, 5].map((n) => ({
        text: t(lang, 'rating-button', { score: n }),
        callback_data: `rate:${consultationId}:${n}`,
      })),
    ],
  }
}

export type RateResult =
  | { status: 'rated'; score: number; previous: number | null; comment: string | null }
  | { status: 'unknown' }
  | { status: 'not-closed' }
  | { status: 'too-late' }

/** Who a consultation's rating counts for: its owner, else whoever answered most of its questions (ties: first). */
async function ratedExpert(
  q: Deps['db'],
  consultationId: number,
): Promise<{ id: number | null; owner: boolean }> {
  const owner = await currentAssignment(q, consultationId)
  if (owner) return { id: owner.expert_id, owner: true }
  const r = await q
    .selectFrom('desk_appeal')
    .select([
      'answered_by',
      sql<number>`count(*)::int`.as('n'),
      sql<Date>`min(first_response_at)`.as('first'),
    ])
    .where('consultation_id', '=', consultationId)
    .where('answered_by', 'is not', null)
    .groupBy('answered_by')
    .orderBy('n', 'desc')
    .orderBy('first')
    .executeTakeFirst()
  return { id: r?.answered_by ?? null, owner: false }
}

/** A client's score (1-5) for their consultation; the consultation's row lock orders concurrent presses. */
export async function rateConsultation(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; userId: number; score: number },
): Promise<RateResult> {
  if (!Number.isInteger(input.score) || input.score < 1 || input.score > 5) return { status: 'unknown' }
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const c = await lockConsultation(trx, input.consultationId)
    if (!c || c.bot_id !== desk.botId || c.user_id !== input.userId) return { status: 'unknown' }
    if (c.state !== 'closed') return { status: 'not-closed' }
    const prev = await trx
      .selectFrom('consultation_rating')
      .select([
        'score',
        'comment',
        sql<boolean>`created_at > now() - make_interval(days => ${desk.rules.ratingEditDays})`.as('editable'),
      ])
      .where('consultation_id', '=', c.id)
      .executeTakeFirst()
    if (prev && !prev.editable) return { status: 'too-late' }
    if (prev?.score === input.score)
      return { status: 'rated', score: input.score, previous: prev.score, comment: prev.comment }
    const rated = await ratedExpert(trx, c.id)
    const expertId = rated.id
    if (prev)
      await trx
        .updateTable('consultation_rating')
        .set({ score: input.score, expert_id: expertId, updated_at: sql`now()` })
        .where('consultation_id', '=', c.id)
        .execute()
    else
      await trx
        .insertInto('consultation_rating')
        .values({
          consultation_id: c.id,
          bot_id: desk.botId,
          user_id: c.user_id,
          expert_id: expertId,
          score: input.score,
        })
        .execute()
    await audit(trx, {
      botId: desk.botId,
      actorId: input.userId,
      action: prev ? 'rating.changed' : 'rating.given',
      subjectType: 'consultation',
      subjectId: c.id,
      details: { score: input.score, previous: prev?.score ?? null, expertId },
    })
    if (input.score <= desk.rules.lowRating && !(prev && prev.score <= desk.rules.lowRating)) {
      const order = await trx
        .selectFrom('orders')
        .select(['title'])
        .where('id', '=', c.order_id)
        .executeTakeFirstOrThrow()
      const changes = await trx
        .selectFrom('audit_log')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('subject_type', '=', 'consultation')
        .where('subject_id', '=', String(c.id))
        .where('action', 'in', ['rating.given', 'rating.changed'])
        .executeTakeFirstOrThrow()
      const name = expertId
        ? ((await staffNames(trx, desk, [expertId])).get(expertId) ?? `id ${expertId}`)
        : '—'
      const params = {
        consultation: String(c.id),
        title: order.title,
        user: String(c.user_id),
        score: input.score,
        expert: name,
      }
      await notify(outbox, {
        botId: desk.botId,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: 'rating-low-admins',
        params,
        dedupeKey: `rating:${c.id}:low:${changes.n}`,
      })
      // The owner hears it too, in private with the bot (an owner who never started the bot is not retried).
      if (rated.owner && expertId)
        await notify(outbox, {
          botId: desk.botId,
          chatId: expertId,
          lang: desk.defaultLanguage,
          key: 'rating-low-owner',
          params,
          dedupeKey: `rating:${c.id}:low:${changes.n}:owner`,
        })
    }
    return {
      status: 'rated',
      score: input.score,
      previous: prev?.score ?? null,
      comment: prev?.comment ?? null,
    }
  })
}

export type CommentResult =
  | { status: 'saved'; score: number }
  | { status: 'unknown' }
  | { status: 'too-late' }

/**
 * Whether the client may comment on a consultation's rating now: their own consultation of this desk, rated less than
 * the desk's rules.ratingEditDays ago. Asked before the comment conversation starts, so a button naming someone else's consultation
 * (or an old one) opens nothing that would wait for the client's next message.
 */
export async function commentCheck(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; userId: number },
): Promise<Exclude<CommentResult, { status: 'saved' }> | { status: 'open' }> {
  const r = await deps.db
    .selectFrom('consultation as c')
    .leftJoin('consultation_rating as r', 'r.consultation_id', 'c.id')
    .select([
      'r.score',
      sql<boolean>`r.created_at > now() - make_interval(days => ${desk.rules.ratingEditDays})`.as('editable'),
    ])
    .where('c.id', '=', input.consultationId)
    .where('c.bot_id', '=', desk.botId)
    .where('c.user_id', '=', input.userId)
    .executeTakeFirst()
  if (!r || r.score === null) return { status: 'unknown' }
  return r.editable ? { status: 'open' } : { status: 'too-late' }
}

/** The client's comment on their rating (replaces an earlier one); the admins see a low rating's comment. */
export async function commentRating(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; userId: number; comment: string; updateId: number },
): Promise<CommentResult> {
  const comment = cut(input.comment.trim(), MAX_COMMENT_LENGTH)
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const c = await lockConsultation(trx, input.consultationId)
    if (!c || c.bot_id !== desk.botId || c.user_id !== input.userId) return { status: 'unknown' }
    const r = await trx
      .updateTable('consultation_rating')
      .set({ comment, updated_at: sql`now()` })
      .where('consultation_id', '=', c.id)
      .where(sql<boolean>`created_at > now() - make_interval(days => ${desk.rules.ratingEditDays})`)
      .returning(['score'])
      .executeTakeFirst()
    if (!r) {
      const exists = await trx
        .selectFrom('consultation_rating')
        .select('score')
        .where('consultation_id', '=', c.id)
        .executeTakeFirst()
      return exists ? { status: 'too-late' } : { status: 'unknown' }
    }
    await audit(trx, {
      botId: desk.botId,
      actorId: input.userId,
      action: 'rating.commented',
      subjectType: 'consultation',
      subjectId: c.id,
      details: { score: r.score, length: comment.length },
    })
    if (r.score <= desk.rules.lowRating)
      await notify(outbox, {
        botId: desk.botId,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: 'rating-low-comment',
        params: { consultation: String(c.id), score: r.score, comment },
        dedupeKey: `rating:${c.id}:comment:${input.updateId}`,
      })
    return { status: 'saved', score: r.score }
  })
}
