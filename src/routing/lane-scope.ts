import type { Api } from 'grammy'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import type { DeskConsultationView } from '../orders/orders.repository'
import type { Lease } from './lanes'
import type { Direction } from './routing.tables'

/**
 * What one run of a lane (src/routing/delivery.ts) hands to the steps it delegates (copies.ts, digest.ts,
 * mirror.ts): the consultation, the direction, the desk's Api and the lease the run holds.
 */
export interface LaneScope {
  readonly deps: Deps
  readonly desk: DeskRuntime
  readonly api: Api
  readonly v: DeskConsultationView
  readonly dir: Direction
  readonly lease: Lease
}

/** How a lane's run ends: all done, or come back after some seconds (a closed window, a 429). */
export type Outcome = { kind: 'done' } | { kind: 'defer'; seconds: number }
export const DONE: Outcome = { kind: 'done' }
