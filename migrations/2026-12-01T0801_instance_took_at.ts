import { type Kysely, sql } from 'kysely'

/**
 * When each process's workers last took a job (issue 18): readiness fails when jobs are due and no live worker took
 * one for too long (src/jobs/health.ts). Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table app_instance add column took_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table app_instance drop column took_at`.execute(db)
}
