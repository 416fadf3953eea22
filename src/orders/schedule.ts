import type { DeskRuntime } from '../config/load'
import { type BusinessSchedule, compileSchedule } from '../consultations/business-time'

const compiled = new WeakMap<DeskRuntime, BusinessSchedule>()

/** The desk's compiled business schedule (compiled once per desk object; config is validated at load). */
export function deskSchedule(desk: DeskRuntime): BusinessSchedule {
  let s = compiled.get(desk)
  if (!s) {
    s = compileSchedule(desk.schedule)
    compiled.set(desk, s)
  }
  return s
}
