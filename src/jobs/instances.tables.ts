import type { Generated } from 'kysely'

export interface InstanceTables {
  /** One row per running process: its heartbeat and the pg-boss jobs it works on (src/jobs/liveness.ts). */
  app_instance: {
    id: string
    role: string
    host: string
    pid: number
    started_at: Generated<Date>
    beat_at: Generated<Date>
    active_jobs: Generated<string[]>
    /** When this process's workers last took a job (null: none yet, or a bot-only process). */
    took_at: Date | null
  }
}
