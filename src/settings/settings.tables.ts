import type { ColumnType, Generated, JSONColumnType } from 'kysely'

/** Settings in PostgreSQL (migration 2026-12-02T0010, src/settings/README.md). */
export type SettingsSource = 'telegram' | 'dashboard' | 'import' | 'seed'

export interface SettingsTables {
  desk_settings: {
    bot_id: number
    version: number
    /** The desk document (DeskConfig), as the schema parsed it (defaults filled in). */
    doc: JSONColumnType<object, string, string>
    updated_at: ColumnType<Date, Date | undefined, Date>
    updated_by: number | null
    source: SettingsSource
  }
  /** The text of every terms version a desk (kind 'desk') or a plan (kind 'plan:<code>') has had. */
  desk_terms: {
    bot_id: number
    kind: string
    version: string
    text: JSONColumnType<Record<string, string>, string, string>
    first_at: Generated<Date>
  }
}
