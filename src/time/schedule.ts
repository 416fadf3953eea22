import { type BusinessSchedule, compileSchedule, type ScheduleInput } from './business-time'

/** What the time floor needs of a desk: its schedule (a DeskRuntime is one). */
export interface DeskSchedule {
  readonly schedule: ScheduleInput
}

const compiled = new WeakMap<DeskSchedule, BusinessSchedule>()

/** The desk's compiled business schedule (compiled once per desk object; config is validated at load). */
export function deskSchedule(desk: DeskSchedule): BusinessSchedule {
  let s = compiled.get(desk)
  if (!s) {
    s = compileSchedule(desk.schedule)
    compiled.set(desk, s)
  }
  return s
}
