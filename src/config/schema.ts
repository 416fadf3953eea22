import { IANAZone } from 'luxon'
import { z } from 'zod'
import { compileSchedule, ScheduleConfigError, WEEKDAYS } from '../consultations/business-time'

/** Languages the bot speaks; every user-facing text in config is given per language. */
export const LANGUAGES = ['ru', 'en'] as const
export type Language = (typeof LANGUAGES)[number]

const language = z.enum(LANGUAGES)

/** A text shown to users, per language. At least the desk's default language must be present (checked below). */
const localized = z.partialRecord(language, z.string().min(1))
export type Localized = z.infer<typeof localized>

const timeZone = z
  .string()
  .refine((tz) => IANAZone.isValidZone(tz), { message: 'expected an IANA time zone' })

const hhmm = /^([01]\d|2[0-4]):[0-5]\d$/
/** "10:00-18:00"; an interval whose end is before its start spans midnight ("22:00-02:00"). */
const interval = z.string().refine(
  (s) => {
    const [a, b, ...rest] = s.split('-')
    return rest.length === 0 && a !== undefined && b !== undefined && hhmm.test(a) && hhmm.test(b) && a !== b
  },
  { message: 'expected "HH:MM-HH:MM"' },
)
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date "YYYY-MM-DD"')

const schedule = z.object({
  timezone: timeZone,
  weekly: z.partialRecord(z.enum(WEEKDAYS), z.array(interval)),
  holidays: z.array(isoDate).default([]),
  /** Dates that are working days although the weekday is not (e.g. a Saturday moved in Russia), with their hours. */
  extraWorkingDays: z.record(isoDate, z.array(interval)).default({}),
})
export type ScheduleConfig = z.infer<typeof schedule>

const tariff = z.object({
  code: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'expected a short code of a-z, 0-9, "_" or "-"'),
  title: localized,
  description: localized,
  /** Whole Stars. */
  priceStars: z.number().int().positive().max(100_000),
  windowHours: z
    .number()
    .positive()
    .max(24 * 90),
  /** Appeals (a question or a clarification round) included in the window. */
  appeals: z.number().int().positive(),
  slaBusinessHours: z.number().positive(),
  startMode: z.enum(['immediate', 'scheduled', 'on_request']),
  /** on_request: how many days after payment the client may press Start. */
  startWithinDays: z.number().int().positive().default(14),
  /** scheduled: announced start slots (ISO instants with offset) and how many clients each takes. */
  slots: z.array(z.string()).default([]),
  slotCapacity: z.number().int().positive().default(1),
  /** Consultations a desk takes per start day (capacity held at pre-checkout). */
  dailyCapacity: z.number().int().positive().default(8),
  /** AI drafts included per consultation (0 = drafting not included). */
  drafts: z.number().int().nonnegative().default(0),
  breachPolicy: z
    .discriminatedUnion('kind', [
      z.object({ kind: z.literal('none') }),
      z.object({ kind: z.literal('extend_window'), hours: z.number().positive() }),
      z.object({ kind: z.literal('extra_appeal') }),
    ])
    .default({ kind: 'none' }),
})
export type TariffConfig = z.infer<typeof tariff>

const desk = z
  .object({
    /** Short name used in the webhook path and logs. */
    slug: z.string().regex(/^[a-z0-9-]{1,32}$/, 'expected a slug of a-z, 0-9 and "-"'),
    name: localized,
    /** Name of the environment variable holding this desk's bot token. */
    tokenEnv: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'expected an environment variable name'),
    defaultLanguage: language.default('ru'),
    /** The staff supergroup with topics enabled; the bot is an admin there with can_manage_topics. */
    staffChatId: z.number().int(),
    staff: z.object({
      admins: z.array(z.number().int().positive()).min(1),
      experts: z.array(z.number().int().positive()).default([]),
    }),
    schedule,
    tariffs: z.array(tariff).min(1),
    terms: z.object({ version: z.string().min(1), text: localized }),
    privacy: localized,
    /** Messages from staff in a topic that start with this prefix stay in the topic. */
    internalNotePrefix: z.string().min(1).default('//'),
    /** Minutes a pre-checkout capacity hold lasts before the slot is freed. */
    holdMinutes: z.number().int().positive().default(30),
  })
  .superRefine((d, ctx) => {
    const check = (value: Localized, path: (string | number)[]) => {
      if (!value[d.defaultLanguage])
        ctx.addIssue({
          code: 'custom',
          path,
          message: `missing the desk's default language "${d.defaultLanguage}"`,
        })
    }
    check(d.name, ['name'])
    check(d.terms.text, ['terms', 'text'])
    check(d.privacy, ['privacy'])
    d.tariffs.forEach((t, i) => {
      check(t.title, ['tariffs', i, 'title'])
      check(t.description, ['tariffs', i, 'description'])
      if (t.startMode === 'scheduled' && t.slots.length === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['tariffs', i, 'slots'],
          message: 'a scheduled tariff needs slots',
        })
    })
    try {
      compileSchedule(d.schedule)
    } catch (e) {
      if (!(e instanceof ScheduleConfigError)) throw e
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: e.message })
    }
    const codes = new Set<string>()
    d.tariffs.forEach((t, i) => {
      if (codes.has(t.code))
        ctx.addIssue({
          code: 'custom',
          path: ['tariffs', i, 'code'],
          message: `duplicate tariff code "${t.code}"`,
        })
      codes.add(t.code)
    })
  })
export type DeskConfig = z.infer<typeof desk>

export const configSchema = z.object({
  mode: z.enum(['polling', 'webhook']).default('polling'),
  http: z
    .object({
      host: z.string().default('0.0.0.0'),
      port: z.number().int().min(0).max(65535).default(8080),
    })
    .prefault({}),
  webhook: z
    .object({
      /** Public HTTPS base URL Telegram calls; the desk's path /telegram/<slug> is appended. */
      publicUrl: z.url().optional(),
    })
    .prefault({}),
  log: z.object({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info') }).prefault({}),
  ledger: z
    .object({
      /** What happens when a commit's actual exceeds the reserved amount: record it all, or cap it and flag it. */
      overrunPolicy: z.enum(['allow', 'cap']).default('allow'),
    })
    .prefault({}),
  desks: z.array(desk).min(1),
})
export type AppConfig = z.infer<typeof configSchema>
