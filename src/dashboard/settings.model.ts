/**
 * The settings pages' JSON (src/dashboard/dashboard.settings.ts, web/dashboard/settings.tsx). Self-contained like
 * dashboard.model.ts: the browser bundle imports these types. Every write carries the settings `version` the page
 * was drawn from; the answer is the settings as they are after it.
 */

export type SettingsLangDto = 'ru' | 'en'
export type WeekdayDto = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun'

export interface SettingsDto {
  version: number
  /** The viewer may manage staff (the owner) and invite admins (the owner); admins invite experts. */
  owner: boolean
  tariffs: {
    code: string
    title: Partial<Record<SettingsLangDto, string>>
    priceStars: number
    windowHours: number
    appeals: number
    slaBusinessHours: number
    startMode: string
    paused: boolean
  }[]
  plans: {
    code: string
    title: Partial<Record<SettingsLangDto, string>>
    priceStars: number
    questions: number
    paused: boolean
  }[]
  schedule: {
    timezone: string
    weekly: Partial<Record<WeekdayDto, string[]>>
    holidays: string[]
    extraWorkingDays: Record<string, string[]>
  }
  /** The zones the page offers (those the bot offers clients), the desk's own included. */
  zones: string[]
  texts: {
    terms: Partial<Record<SettingsLangDto, string>>
    termsVersion: string
    privacy: Partial<Record<SettingsLangDto, string>>
  }
  staff: { id: number; name: string; role: 'owner' | 'admin' | 'expert' }[]
}

/** One field, as the chat's /settings edits it by typing (src/settings/fields.ts `Target`). */
export type FieldTargetDto =
  | { kind: 'tariff'; code: string; field: 'priceStars' | 'title' | 'appeals' | 'windowHours' }
  | { kind: 'plan'; code: string; field: 'priceStars' | 'title' | 'questions' }
  | { kind: 'weekday'; day: WeekdayDto }
  | { kind: 'holiday' }
  | { kind: 'extra' }
  | { kind: 'text'; which: 'terms' | 'privacy'; lang: SettingsLangDto }

export interface SettingsIssueDto {
  /** The field in the page's words: `priceStars`, `title`, `weekday`, `holiday`, `terms`, `code`... */
  field: string
  /** The field in the desk document, when the schema named it (`tariffs[0].priceStars`). */
  path?: string
  message: string
}

/**
 * 200 `done`: written (the settings after it). 409 `conflict`: someone changed the settings since the page read
 * them; nothing written; `settings` are the current ones and `current` the field's value now (when one field was
 * edited). 400 `invalid`: refused, each issue names the field; nothing written. 403 `forbidden`, 404 `gone`.
 */
export type SettingsAnswerDto =
  | { status: 'done'; settings: SettingsDto }
  | { error: 'conflict'; settings: SettingsDto; current?: string }
  | { error: 'invalid'; issues: SettingsIssueDto[] }
  | { error: 'forbidden' | 'gone' }

export interface InviteDto {
  link: string
  role: 'expert' | 'admin'
  uses: number
  expiresAt: string
}
