import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConsultationItemDto, OverviewDto } from '../../src/dashboard/dashboard.model'
import { topicLink } from '../../src/experts/alerts'
import { queueOf, renderQueue } from '../../src/experts/queue'
import { signInitData } from '../support/dashboard'
import { EVE_ID, unassignAll, world } from '../support/experts'
import {
  ADMIN_ID,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  itemIn,
  staffSends,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * A staff member's queue (src/experts/queue.ts): /mine in private and the dashboard's "Open now". An expert sees the
 * open questions of the consultations they own (answered before or not), by due time; another expert none of
 * them; an admin all of the desk's.
 */

describe('/mine: my open questions', () => {
  let w: DeskWorld
  let eve: ReturnType<DeskWorld['tg']['user']>
  beforeAll(async () => {
    w = await world()
    eve = w.tg.user({ id: EVE_ID, first_name: 'Eve', language_code: 'en' })
  })
  afterAll(() => w?.stop())

  /** Three consultations Eve owns, a question each; she answered the first; the third is due first (overdue). */
  async function evesThree() {
    await unassignAll(w)
    const cs = []
    for (let i = 0; i < 3; i++) {
      const c = await consultationWithTopic(w, { language_code: 'en' }, { tariff: 'eve' })
      const q = await clientSends(w, c.client, `Question ${i}`)
      await itemIn(w, c.client.id, q.message_id, 'sent')
      await eventually(async () => (await appeals(w, c.consultationId))[0], 'the appeal')
      cs.push(c)
    }
    const [answered, later, sooner] = cs as [(typeof cs)[0], (typeof cs)[0], (typeof cs)[0]]
    await staffSends(w, answered.route.message_thread_id, eve, 'The answer')
    await eventually(
      async () => (await appeals(w, answered.consultationId))[0]?.state === 'answered',
      'the answer',
    )
    // Due times not in creation order: "later" in 2 h 30 min, "sooner" 20 min ago (the test desk works 24/7).
    const due = (id: number, minutes: number) =>
      sql`update desk_appeal set due_at = now() + make_interval(mins => ${minutes})
          where consultation_id = ${id}`.execute(w.deps.db)
    await due(later.consultationId, 150)
    await due(sooner.consultationId, -20)
    return { answered, later, sooner }
  }

  it('an expert sees exactly their two open questions by due time, another expert none, an admin all', async () => {
    const { answered, later, sooner } = await evesThree()
    const now = new Date()
    const ids = async (userId: number, admin: boolean) =>
      (await queueOf(w.deps.db, w.t.desk, { userId, admin }, now)).items.map((i) => i.consultationId)
    expect(await ids(EVE_ID, false)).toEqual([sooner.consultationId, later.consultationId])
    expect(await ids(EXPERT_ID, false)).toEqual([])
    const all = await ids(ADMIN_ID, true)
    expect(all.filter((id) => [answered, later, sooner].some((c) => c.consultationId === id))).toEqual([
      sooner.consultationId,
      later.consultationId,
    ])

    // A longer queue stops at the limit and says how many more.
    const short = await queueOf(w.deps.db, w.t.desk, { userId: EVE_ID, admin: false }, now, 1)
    expect(short.items.map((i) => i.consultationId)).toEqual([sooner.consultationId])
    expect(short.more).toBe(1)
    const en = (k: string, p?: Record<string, string | number>) => w.deps.i18n.t('en', k, p)
    expect(renderQueue(en, 'en', short, false).text).toMatch(/Your 2 open questions[\s\S]*\n…and one more\.$/)

    // Through the bot, in private: the same list, each question a link into its topic.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(eve, '/mine'))
    const m = await w.tg.waitForSent(EVE_ID, /Your 2 open questions, by due time/, { since })
    const text = m.text ?? ''
    expect(text.indexOf(`consultation #${sooner.consultationId},`)).toBeLessThan(
      text.indexOf(`consultation #${later.consultationId},`),
    )
    expect(text).not.toContain(`consultation #${answered.consultationId},`)
    expect(text).toMatch(/overdue by 2\d min/)
    expect(text).toMatch(/2 h (29|30) min of working time left/)
    const links = (m.message.entities ?? []).flatMap((e) => (e.type === 'text_link' ? [e.url] : []))
    expect(links).toEqual([
      topicLink(sooner.route.support_chat_id, sooner.route.message_thread_id),
      topicLink(later.route.support_chat_id, later.route.message_thread_id),
    ])
    expect(links[0]).toMatch(/^https:\/\/t\.me\/c\/\d+\/\d+$/)

    await w.tg.push(TEST_BOT_ID, w.tg.command(w.expert, '/mine'))
    await w.tg.waitForSent(EXPERT_ID, /Открытых вопросов у вас сейчас нет/, { since })
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/mine'))
    const a = await w.tg.waitForSent(ADMIN_ID, /The desk's \d+ open questions, by due time/, { since })
    expect(a.text).toContain(`consultation #${sooner.consultationId},`)
    expect(a.text).toContain('· Eve')
  })

  it('the dashboard API puts the same queue first in the overview, names included; the owner opens the consultation', async () => {
    const { answered, later, sooner } = await evesThree()
    const TOKEN = `${TEST_BOT_ID}:${'T'.repeat(35)}`
    const get = async (userId: number, path: string) => {
      const res = await fetch(`http://127.0.0.1:${w.t.app.httpPort}/dashboard/test/api/${path}`, {
        headers: {
          authorization: `tma ${signInitData(TOKEN, { user: { id: userId, language_code: 'en' } })}`,
        },
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    const mine = (await get(EVE_ID, 'overview?days=30')).body as OverviewDto
    expect(mine.openNow.items.map((i) => i.consultationId)).toEqual([
      sooner.consultationId,
      later.consultationId,
    ])
    expect(mine.openNow.more).toBe(0)
    expect(mine.openNow.items[0]).toMatchObject({ overdue: true, owner: { id: EVE_ID, name: 'Eve' } })
    expect(mine.openNow.items[0]!.topicLink).toBe(
      topicLink(sooner.route.support_chat_id, sooner.route.message_thread_id),
    )
    expect(mine.openNow.items[1]!.minutesLeft).toBeGreaterThan(148)
    expect(mine.staffNames[String(EVE_ID)]).toBe('Eve')
    const ed = (await get(EXPERT_ID, 'overview?days=30')).body as OverviewDto
    expect(ed.openNow.items).toEqual([])
    const admin = (await get(ADMIN_ID, 'overview?days=30')).body as OverviewDto
    const ours = new Set([answered, later, sooner].map((c) => c.consultationId))
    expect(admin.openNow.items.map((i) => i.consultationId).filter((id) => ours.has(id))).toEqual([
      sooner.consultationId,
      later.consultationId,
    ])
    // Assigned but never answered: still hers on the list and on its page; not Ed's.
    const list = (await get(EVE_ID, 'consultations')).body as ConsultationItemDto[]
    expect(list.map((c) => c.id)).toEqual(expect.arrayContaining([...ours]))
    expect((await get(EVE_ID, `consultations/${later.consultationId}`)).status).toBe(200)
    expect((await get(EXPERT_ID, `consultations/${later.consultationId}`)).status).toBe(404)
  })

  it('a client gets the usual answer to an unknown command', async () => {
    const c = await consultationWithTopic(w, { language_code: 'en' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(c.client, '/mine'))
    await w.tg.waitForSent(c.client.id, /Unknown command/, { since })
  })
})
