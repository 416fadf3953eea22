import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { boundGroups } from '../../src/settings/removals'
import { changeDesk } from '../../src/settings/settings'
import {
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  paidConsultation,
  STAFF_CHAT_ID,
  startDeskWorld,
} from '../support/fixtures'
import { ADMIN_ID, TEST_BOT_ID } from './payments-support'
import { EDITED_POLICIES, settingsKit } from './settings-support'
import { plan, subscribe } from './subscriptions-support'

/**
 * /settings, the rest of issue 24 (src/bot/features/settings, src/settings/removals.ts, src/setup/migrate.ts)
 * through the Bot API stand-in on a real database: more tariff fields, anti-flood and days off (bad input named,
 * nothing changed), plans created and deleted (refused with live subscribers), two admins on one plan at once,
 * staff groups unbound (refused with live consultations) and followed when a group gets a new id.
 */

const ADMIN2_ID = 900013
const BASIC = plan({ code: 'basic', priceStars: 500, questions: 3 })
let w: DeskWorld
let admin: User
let admin2: User

beforeAll(async () => {
  w = await startDeskWorld({
    configure: (c) => {
      c.desks[0]!.staff.admins.push(ADMIN2_ID)
      c.desks[0]!.plans = [BASIC]
    },
  })
  admin = w.admin
  admin2 = w.tg.user({ id: ADMIN2_ID, first_name: 'Bea', language_code: 'en' })
})
afterAll(async () => {
  await w?.stop()
})

const { version, doc, audits, press, send } = settingsKit(() => w)

/** Opens a field's editor, sends a bad answer (refused naming `field`, nothing changed), then a good one. */
async function edit(button: string, field: string, bad: string, good: string) {
  const v = await version()
  const a = await audits()
  await press(admin, button)
  expect(await send(admin, bad, /was not accepted|Saved/)).toMatch(new RegExp(`^${field} was not accepted`))
  expect(await version()).toBe(v)
  expect(await audits()).toBe(a)
  const saved = await send(admin, good, /Saved|Someone else/)
  expect(saved).toMatch(new RegExp(`^Saved\\. ${field} is now: `))
  expect(await version()).toBe(v + 1)
  expect(await audits()).toBe(a + 1)
  return saved
}

describe('/settings: the rest of the desk', () => {
  it('refuses owner actions to a client and to an expert; nothing changes', async () => {
    const client = w.tg.user({ first_name: 'Carl', language_code: 'en' })
    const v = await version()
    for (const who of [client, w.expert])
      for (const data of [
        `st:pD:basic:${v}`,
        `st:gU:${STAFF_CHAT_ID}:${v}`,
        'st:af',
        `st:te:quick:breach:${v}`,
        `st:pn:${v}`,
        `st:eo:${EXPERT_ID}:${v}`,
      ])
        expect(await press(who, data), `${who.first_name}: ${data}`).toMatch(
          /Only the desk's owner and admins|только его владелец и администраторы|только владелец и администраторы/,
        )
    expect(await version()).toBe(v)
    expect((await doc()).plans.map((p) => p.code)).toEqual(['basic'])
  })

  it("edits a tariff's answer time, capacity, breach and refund policies and top-ups (bad input named)", async () => {
    let v = await version()
    await edit(`st:te:quick:sla:${v}`, 'Answer time', '0', '2.5')
    v = await version()
    await edit(`st:te:quick:cap:${v}`, 'Consultations per day', '1.5', '3')
    v = await version()
    expect(await edit(`st:te:quick:breach:${v}`, 'If late', 'extend', 'extend 2')).toBe(
      'Saved. If late is now: extend 2',
    )
    v = await version()
    await edit(`st:te:quick:refund:${v}`, 'On a refund', 'maybe', 'stop')
    v = await version()
    expect(
      await edit(`st:te:quick:topUps:${v}`, 'Top-ups', '2 bananas 5', '2 questions 100, 1 hour 60'),
    ).toBe('Saved. Top-ups is now: 2 questions 100, 1 hour 60')
    const t = (await doc()).tariffs.find((x) => x.code === 'quick')!
    expect(t).toMatchObject({ slaBusinessHours: 2.5, dailyCapacity: 3, ...EDITED_POLICIES })
    await eventually(
      async () => w.t.desk.tariffs.find((x) => x.code === 'quick')!.dailyCapacity === 3,
      'live',
    )
  })

  it("sets the desk's anti-flood and an expert's days off (bad input named, nothing changed)", async () => {
    await edit('st:af', 'Anti-flood', '2000', '5')
    expect((await doc()).antiFlood).toEqual({ perMinute: 5 })
    await edit(`st:eo:${EXPERT_ID}:${await version()}`, 'Days off', 'funday', 'sat, 2027-01-07')
    expect((await doc()).expertSettings.daysOff[String(EXPERT_ID)]).toEqual(['sat', '2027-01-07'])
    await eventually(async () => w.t.desk.antiFlood?.perMinute === 5, 'the desk to take the anti-flood')
  })

  it('creates a plan step by step (a bad price named); a plan with a subscriber is not deleted, one without is', async () => {
    const since = w.tg.mark()
    await press(admin, `st:pn:${await version()}`)
    await w.tg.waitForSent(admin.id, /New plan/, { since })
    await send(admin, 'gold', /title/)
    await send(admin, 'Gold', /price per 30 days/)
    expect(await send(admin, '20000', /was not accepted/)).toMatch(/^Price was not accepted/)
    await send(admin, '700', /questions a period/)
    await send(admin, '4', /business hours/)
    expect(await send(admin, '6', /Created|not accepted/)).toMatch(
      /^Created\. Clients see it in \/plan now, at 700 ⭐/,
    )
    expect((await doc()).plans.find((p) => p.code === 'gold')).toMatchObject({
      priceStars: 700,
      questions: 4,
      slaBusinessHours: 6,
    })
    // The carry-over of unused questions at renewal (a number, or "none"): bad input named, nothing changed.
    expect(await edit(`st:pe:gold:carry:${await version()}`, 'Carry-over', 'lots', '2')).toBe(
      'Saved. Carry-over is now: 2',
    )
    expect((await doc()).plans.find((p) => p.code === 'gold')?.carryOver).toEqual({ capped: 2 })
    await edit(`st:pe:gold:carry:${await version()}`, 'Carry-over', '-1', 'none')
    expect((await doc()).plans.find((p) => p.code === 'gold')?.carryOver).toBe('none')

    const client = w.tg.user({ first_name: 'Dora', language_code: 'en' })
    await subscribe(w, client, BASIC)
    const v = await version()
    expect(await press(admin, `st:pD:basic:${v}`)).toBe(
      'The plan has 1 current subscriber, so it was not deleted. Pause it instead: new subscriptions stop, the current one runs as bought.',
    )
    expect(await version()).toBe(v)
    expect((await doc()).plans.some((p) => p.code === 'basic')).toBe(true)
    expect(await press(admin, `st:pD:gold:${v}`)).toBe('Saved.')
    expect((await doc()).plans.map((p) => p.code)).toEqual(['basic'])
  })

  it('two admins on the same plan at once (both delete, or one deletes while the other edits): one wins (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (d) => {
        d.plans.push(plan({ code: 'tmp', priceStars: 300, questions: 2 }))
      })
      const v = await version()
      const both = round % 2 === 0
      if (!both) {
        const since = w.tg.mark()
        await press(admin2, `st:pe:tmp:priceStars:${v}`)
        await w.tg.waitForSent(admin2.id, /new price/, { since })
      }
      const [a, b] = await Promise.all([
        press(admin, `st:pD:tmp:${v}`),
        both ? press(admin2, `st:pD:tmp:${v}`) : send(admin2, '777', /Saved|Someone else/),
      ])
      const won = [a, b].filter((r) => r.startsWith('Saved'))
      expect(won, `round ${round}: ${a} / ${b}`).toHaveLength(1)
      expect([a, b].find((r) => !r.startsWith('Saved'))).toMatch(
        /^Someone else changed the settings meanwhile/,
      )
      expect(await version()).toBe(v + 1)
      const tmp = (await doc()).plans.find((p) => p.code === 'tmp')
      if (both || a.startsWith('Saved')) expect(tmp, `round ${round}: ${a} / ${b}`).toBeUndefined()
      else expect(tmp?.priceStars, `round ${round}: ${a} / ${b}`).toBe(777)
      if (tmp)
        await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (d) => {
          d.plans = d.plans.filter((p) => p.code !== 'tmp')
        })
    }
  })

  it('unbinds a staff group: refused while a live consultation is there, done once it is not', async () => {
    // A second group, bound by adding the bot with its rights and confirming.
    const second = w.tg.forum({ title: 'Second' })
    let since = w.tg.mark()
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.setBotMember(TEST_BOT_ID, second.id, admin, {
        rights: { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true },
      }),
    )
    await w.tg.waitForSent(admin.id, /Use «Second» as the staff group\?/, { since })
    since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(admin, `sg:use:${second.id}`))
    await w.tg.waitForSent(admin.id, /«Second»/, { since })
    expect(boundGroups(await doc())).toEqual([STAFF_CHAT_ID, second.id])

    const { consultationId } = await paidConsultation(w)
    const c = await w.deps.db
      .selectFrom('consultation')
      .select('staff_chat_id')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    const busy = c.staff_chat_id ?? STAFF_CHAT_ID
    const free = busy === STAFF_CHAT_ID ? second.id : STAFF_CHAT_ID
    const v = await version()
    // Live there: this consultation, and the support plan's of the test above when it is the home group.
    const live = busy === STAFF_CHAT_ID ? 2 : 1
    expect(await press(admin, `st:gU:${busy}:${v}`)).toBe(
      live === 1
        ? '1 live consultation is in this group, so it was not unbound. Unbind it once it has ended.'
        : '2 live consultations are in this group, so it was not unbound. Unbind it once they have ended.',
    )
    expect(await version()).toBe(v)
    expect(await press(admin, `st:gU:${free}:${v}`)).toBe('Saved.')
    const d = await doc()
    expect(boundGroups(d)).toEqual([busy])
    expect(d.staffChatId).toBe(busy)
    expect(d.staffGroups).toBeUndefined()

    // This consultation ended (and its questions answered), as the lifecycle would end it.
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'closed' })
      .where('id', '=', consultationId)
      .execute()
    await w.deps.db
      .updateTable('desk_appeal')
      .set({ state: 'answered' })
      .where('consultation_id', '=', consultationId)
      .execute()
    const last = await press(admin, `st:gU:${busy}:${await version()}`)
    if (live === 2) {
      // The support plan's consultation runs on in the home group: still refused, now for that one alone.
      expect(last).toBe(
        '1 live consultation is in this group, so it was not unbound. Unbind it once it has ended.',
      )
      expect(boundGroups(await doc())).toEqual([busy])
      return
    }
    expect(last).toBe('Saved.')
    expect(boundGroups(await doc())).toEqual([])
    // The desk has no staff group now: the home group bound again for the next test.
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (x) => {
      x.staffChatId = STAFF_CHAT_ID
    })
  })

  it("follows a group's new id: a bound group's binding moves and the admins are told; an unbound one is asked about", async () => {
    const rights = { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true }
    // Bound: listed next to the home group, then upgraded (a new id).
    const old = w.tg.forum({ title: 'Team' })
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (x) => {
      x.staffGroups = [
        { chatId: STAFF_CHAT_ID, experts: [EXPERT_ID] },
        { chatId: old.id, experts: [EXPERT_ID] },
      ]
    })
    const next = w.tg.forum({ title: 'Team' })
    w.tg.setBotMember(TEST_BOT_ID, next.id, admin, { rights })
    let since = w.tg.mark()
    const moved = w.tg.groupTopicMessage(old.id, undefined, admin, { migrate_to_chat_id: next.id } as never)
    await w.tg.push(TEST_BOT_ID, moved)
    await w.tg.waitForSent(admin.id, /became a supergroup with a new id/, { since })
    // Bea has not written to the bot yet: told in the desk's language.
    await w.tg.waitForSent(admin2.id, /стала супергруппой с новым номером/, { since })
    expect(boundGroups(await doc())).toEqual([STAFF_CHAT_ID, next.id])
    // The same news again (redelivered, or the new group's migrate_from_chat_id): nothing more.
    const v = await version()
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(next.id, undefined, admin, { migrate_from_chat_id: old.id } as never),
    )
    await inboxDrained(w.deps.db)
    expect(await version()).toBe(v)

    // Not bound yet (added without Topics), then upgraded: the admin who added it is asked about the new group.
    const plain = w.tg.supergroup({ title: 'Plain' })
    since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.setBotMember(TEST_BOT_ID, plain.id, admin, { rights }))
    await w.tg.waitForSent(admin.id, /«Plain», but it cannot be the staff group yet/, { since })
    const upgraded = w.tg.forum({ title: 'Plain' })
    w.tg.setBotMember(TEST_BOT_ID, upgraded.id, admin, { rights })
    since = w.tg.mark()
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(plain.id, undefined, admin, { migrate_to_chat_id: upgraded.id } as never),
    )
    const ask = await w.tg.waitForSent(admin.id, /Use «Plain» as the staff group\?/, { since })
    expect(JSON.stringify(ask.reply_markup)).toContain(`sg:use:${upgraded.id}`)
    expect(boundGroups(await doc())).not.toContain(plain.id)
  })
})
