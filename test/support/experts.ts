import { runReminder } from '../../src/lifecycle/sla.service'
import type { DeskWorld } from './fixtures'
import { appeals, EXPERT_ID, eventually, STAFF_CHAT_ID, startDeskWorld } from './fixtures'

/** The experts tests' desk (test/e2e/experts*.test.ts): Ed and Eve, Eve named on a tariff, a snippet. */
export const EVE_ID = 900003
export const MIN = 60_000

export const owner = (w: DeskWorld, consultationId: number) =>
  w.deps.db
    .selectFrom('expert_assignment')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('ended_at', 'is', null)
    .executeTakeFirst()

export const history = (w: DeskWorld, consultationId: number) =>
  w.deps.db
    .selectFrom('expert_assignment')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('id')
    .execute()

export function world() {
  return startDeskWorld({
    configure: (c) => {
      const d = c.desks[0]!
      d.staff.experts = [EXPERT_ID, EVE_ID]
      d.expertSettings.names = { [String(EVE_ID)]: 'Eve' }
      d.expertSettings.snippets = { hello: { en: 'Hello! Looking into it.', ru: 'Здравствуйте! Смотрю.' } }
      d.tariffs.push({ ...d.tariffs[0]!, code: 'eve', expert: EVE_ID })
      d.tariffs.push({ ...d.tariffs[0]!, code: 'many', appeals: 10 })
    },
  })
}

export async function unassignAll(w: DeskWorld) {
  // Each test starts from "nobody owns anything live": close what earlier tests left active.
  await w.deps.db.updateTable('consultation').set({ state: 'closed' }).where('state', '=', 'active').execute()
  await w.deps.db.updateTable('desk_appeal').set({ state: 'answered' }).where('state', '=', 'open').execute()
}

/** Runs the SLA reminder of the consultation's first question 30 minutes before it is due; its text in the group. */
export async function remindFirstQuestion(w: DeskWorld, consultationId: number) {
  const [a] = await eventually(async () => {
    const x = await appeals(w, consultationId)
    return x.length ? x : undefined
  }, 'the appeal')
  if ((await runReminder(w.deps, a!.id, { now: new Date(a!.due_at.getTime() - 30 * MIN) })) !== 'reminded')
    throw new Error('the reminder did not run')
  return w.tg.waitForSent(STAFF_CHAT_ID, /Ответ на вопрос №1 нужен до/)
}
