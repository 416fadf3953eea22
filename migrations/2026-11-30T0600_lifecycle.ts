import { type Kysely, sql } from 'kysely'

/**
 * SLA jobs and the window lifecycle (issue 6): what the jobs did, per appeal and per consultation, so each thing they
 * do happens once however often a job runs. Every "once" is a conditional UPDATE on these rows (or on the state the
 * desk already keeps: desk_appeal.breached_at, consultation.state); notifications are deduplicated again by their
 * key in outbound_message. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table appeal_sla (
      appeal_id bigint primary key references desk_appeal (id),
      bot_id bigint not null,
      consultation_id bigint not null references consultation (id),
      -- The reminder was written into the topic.
      reminded_at timestamptz,
      -- The breach policy as the order snapshotted it, and what applying it gave (set once, with breached_at).
      breach_policy jsonb,
      breach_outcome text check (breach_outcome in ('none', 'extended', 'extra_appeal', 'skipped')),
      breach_detail jsonb,
      -- Never answered by the end of the consultation: admins were asked for a refund decision.
      refund_flagged_at timestamptz,
      -- The client had blocked the bot when a job for this appeal ran: noted, nothing paused.
      client_blocked_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index appeal_sla_consultation on appeal_sla (consultation_id)`.execute(db)

  await sql`
    create table consultation_lifecycle (
      consultation_id bigint primary key references consultation (id),
      bot_id bigint not null,
      -- The access_until the "closes soon" notice was written for (an extension moves the window: a new notice).
      closing_soon_for timestamptz,
      -- The window-end job closed the consultation (closed_at on consultation is the window's end).
      window_closed_at timestamptz,
      -- The staff topic was closed (every accepted appeal answered).
      topic_closed_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table consultation_lifecycle, appeal_sla`.execute(db)
}
