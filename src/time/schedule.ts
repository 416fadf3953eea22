import { type BusinessSchedule, compileSchedule, type ScheduleInput } from './business-time'

/** What the time floor needs of a desk: its schedule (a DeskRuntime is one). */
export interface DeskSchedule {
  readonly schedule: ScheduleInput
}

const compiled = new WeakMap<ScheduleInput, BusinessSchedule>()

/**
 * The desk's compiled business schedule, compiled once per schedule object (config is validated at load). Keyed by
 * `desk.schedule`, not the desk: a settings change (src/settings/cache.ts) replaces the desk's schedule object in
 * place, and the next call compiles the new one.
 */
export function deskSchedule(desk: DeskSchedule): BusinessSchedule {
  let s = compiled.get(desk.schedule)
  if (!s) {
    s = compileSchedule(desk.schedule)
    compiled.set(desk.schedule, s)
  }
  return s
}
