import { IANAZone } from 'luxon'
import { z } from 'zod'

/** The config's building blocks, shared by the schema's parts (schema.ts, plan.schema.ts). */

/** Languages the bot speaks; every user-facing text in config is given per language. */
export const LANGUAGES = ['ru', 'en'] as const
export type Language = (typeof LANGUAGES)[number]

export const language = z.enum(LANGUAGES)

/** A text shown to users, per language. At least the desk's default language must be present (checked in schema.ts). */
export const localized = z.partialRecord(language, z.string().min(1))
export type Localized = z.infer<typeof localized>

export const timeZone = z
  .string()
  .refine((tz) => IANAZone.isValidZone(tz), { message: 'expected an IANA time zone' })

export const hhmm = /^([01]\d|2[0-4]):[0-5]\d$/
/** "10:00-18:00"; an interval whose end is before its start spans midnight ("22:00-02:00"). */
export const interval = z.string().refine(
  (s) => {
    const [a, b, ...rest] = s.split('-')
    return rest.length === 0 && a !== undefined && b !== undefined && hhmm.test(a) && hhmm.test(b) && a !== b
  },
  { message: 'expected "HH:MM-HH:MM"' },
)
/** A snippet's name in `/s NAME` and `/snippet add NAME`. */
export const SNIPPET_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date "YYYY-MM-DD"')
