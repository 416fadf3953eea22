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
    /** Every field the chat edits by typing, as it shows it (the same words are typed back): `extend 2`, `-`... */
    fields: Record<TariffFieldDto, string>
  }[]
  plans: {
    code: string
    title: Partial<Record<SettingsLangDto, string>>
    priceStars: number
    questions: number
    paused: boolean
    /** Every field the chat edits by typing, as it shows it, in the chat's order (the page shows them in it). */
    fields: Record<PlanFieldDto, string>
  }[]
  /** The desk's anti-flood (messages a minute into the topic one by one), `-` when the deployment's default applies. */
  antiFlood: string
  /**
   * The desk's rules, each as the chat shows it when asking for it (zones and languages comma-separated), in the order
   * the chat's Desk rules screen shows them (src/settings/fields.ts RULE_FIELDS): the page shows them in it.
   */
  rules: Record<RuleFieldDto, string>
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
  /** `daysOff`: weekdays and dates with no new consultations assigned, as typed ("sat, 2027-01-07"), or `-`. */
  staff: { id: number; name: string; role: 'owner' | 'admin' | 'expert'; daysOff: string }[]
}

export type TariffFieldDto =
  | 'priceStars'
  | 'title'
  | 'appeals'
  | 'windowHours'
  | 'slaBusinessHours'
  | 'dailyCapacity'
  | 'slotCapacity'
  | 'slots'
  | 'breachPolicy'
  | 'refundPolicy'
  | 'topUps'
export type PlanFieldDto =
  | 'priceStars'
  | 'title'
  | 'questions'
  | 'slaBusinessHours'
  | 'refundPolicy'
  | 'carryOver'
/** The desk's rules (src/config/rules.schema.ts), as the chat's Desk rules screen edits them. */
export type RuleFieldDto =
  | 'disputeAnswerHours'
  | 'unpaidOrderHours'
  | 'ratingEditDays'
  | 'lowRating'
  | 'zones'
  | 'languages'
  | 'stallSeconds'
  | 'deadLetterMinutes'
  | 'processedUpdateHours'
  | 'inboxUpdateHours'
  | 'outboundMessageDays'
  | 'conversationStateDays'
  | 'refusalToldHours'
  | 'privateAlertDays'

/** One field, as the chat's /settings edits it by typing (src/settings/fields.ts `Target`). */
export type FieldTargetDto =
  | { kind: 'tariff'; code: string; field: TariffFieldDto }
  | { kind: 'plan'; code: string; field: PlanFieldDto }
  | { kind: 'antiFlood' }
  | { kind: 'rule'; field: RuleFieldDto }
  | { kind: 'daysOff'; userId: number }
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
 * edited). 409 `refused`: what is running forbids it (a plan with `count` current subscribers is not deleted);
 * nothing written. 400 `invalid`: refused, each issue names the field; nothing written. 403 `forbidden`, 404 `gone`.
 */
export type SettingsAnswerDto =
  | { status: 'done'; settings: SettingsDto }
  | { error: 'conflict'; settings: SettingsDto; current?: string }
  | { error: 'invalid'; issues: SettingsIssueDto[] }
  | { error: 'refused'; reason: RefusalDto; count?: number; settings: SettingsDto }
  | { error: 'forbidden' | 'gone' }

export interface InviteDto {
  link: string
  role: 'expert' | 'admin'
  uses: number
  expiresAt: string
}

/** Why a change was refused by what is running: `live-subscribers` (a plan with current subscriptions). */
export type RefusalDto = 'live-subscribers'
