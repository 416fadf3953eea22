import { DateTime } from 'luxon'
import { z } from 'zod'
import { compileSchedule, isOpen, ScheduleConfigError, WEEKDAYS } from '../time/business-time'
import { plan } from './plan.schema'
import { interval, isoDate, type Localized, language, localized, SNIPPET_NAME, timeZone } from './primitives'
import { rulesSchema } from './rules.schema'

/**
 * Every object is strict (z.strictObject): an unknown key, a typo such as `mod: webhook`, is an error naming it.
 *
 * (About 440 lines: the one schema a config file, a stored desk and every run-time edit are checked with, with the
 * cross-field checks that need the whole desk; plans, rules and shared primitives have files of their own.)
 */

export type { PlanConfig } from './plan.schema'
export { LANGUAGES, type Language, type Localized, SNIPPET_NAME } from './primitives'
export type { RetentionConfig, RulesConfig } from './rules.schema'

const schedule = z.strictObject({
  timezone: timeZone,
  weekly: z.partialRecord(z.enum(WEEKDAYS), z.array(interval)),
  holidays: z.array(isoDate).default([]),
  /** Dates that are working days although the weekday is not (e.g. a Saturday moved in Russia), with their hours. */
  extraWorkingDays: z.record(isoDate, z.array(interval)).default({}),
})
export type ScheduleConfig = z.infer<typeof schedule>

const tariff = z.strictObject({
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
  /** Paused (issue 24, /settings): not listed to clients, its pay buttons and invoices refused; paid orders keep theirs. */
  paused: z.boolean().default(false),
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
      z.strictObject({ kind: z.literal('none') }),
      z.strictObject({ kind: z.literal('extend_window'), hours: z.number().positive() }),
      z.strictObject({ kind: z.literal('extra_appeal') }),
    ])
    .default({ kind: 'none' }),
  /** The expert (a Telegram user id of staff) who owns every consultation of this tariff (src/experts). */
  expert: z.number().int().positive().optional(),
  /** What a refund does to questions already accepted: 'deliver' (answers still come) or 'stop' (all ends). */
  refundPolicy: z.enum(['deliver', 'stop']).default('deliver'),
  /** scheduled: the client may move the start or cancel (refunded) until this many hours before it. */
  changeCutoffHours: z.number().nonnegative().default(24),
  /**
   * Top-ups a client may buy inside an active consultation of this tariff (offered when questions run out and in
   * the "closes soon" notice): more questions, or more hours of window, each for a price in Stars.
   */
  topUps: z
    .array(
      z.discriminatedUnion('kind', [
        z.strictObject({
          kind: z.literal('questions'),
          questions: z.number().int().positive().max(100),
          priceStars: z.number().int().positive().max(100_000),
        }),
        z.strictObject({
          kind: z.literal('hours'),
          hours: z
            .number()
            .int()
            .positive()
            .max(24 * 30),
          priceStars: z.number().int().positive().max(100_000),
        }),
      ]),
    )
    .max(4)
    .default([]),
})
export type TariffConfig = z.infer<typeof tariff>
/** One tariff's schema: /settings validates each answer with its field's schema before the whole desk's. */
export const tariffSchema = tariff

/** One desk: one `desks[]` entry of the YAML, and the document src/settings keeps per desk in PostgreSQL. */
export const deskSchema = z
  .strictObject({
    /** Short name used in the webhook path and logs. */
    slug: z.string().regex(/^[a-z0-9-]{1,32}$/, 'expected a slug of a-z, 0-9 and "-"'),
    name: localized,
    /** Name of the environment variable holding this desk's bot token. */
    tokenEnv: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'expected an environment variable name'),
    defaultLanguage: language.default('ru'),
    /**
     * The staff supergroup with topics enabled; the bot is an admin there with can_manage_topics. Unset on a desk
     * being set up (a first run with only a token): nothing is sold and no topic is made until it is set.
     */
    staffChatId: z.number().int().optional(),
    staff: z.strictObject({
      /** The desk's owner: an admin who also manages staff (claimed with the one-time owner link; one of admins). */
      owner: z.number().int().positive().optional(),
      /** Empty on a desk being set up (until the owner claims it). */
      admins: z.array(z.number().int().positive()).default([]),
      experts: z.array(z.number().int().positive()).default([]),
      /**
       * Whether an anonymous admin of the staff group (posting as the group, sender_chat) acts as a desk admin.
       * Off by default: Telegram does not say who they are, and only listed staff act.
       */
      anonymousAdmins: z.boolean().default(false),
    }),
    schedule,
    /** None on a desk being set up: the tariff list says the desk is not open for sale yet. */
    tariffs: z.array(tariff).default([]),
    /** Support plans paid by a Stars subscription (src/subscriptions); none by default. */
    plans: z.array(plan).default([]),
    /** Hours after a period's end a renewal may still arrive before the plan lapses. */
    subscriptionGraceHours: z.number().nonnegative().default(24),
    terms: z.strictObject({ version: z.string().min(1), text: localized }),
    privacy: localized,
    /**
     * The staff supergroups consultations go to (issue 16; src/config/staff-groups.ts), each with its experts and
     * its own Telegram budget (20 messages a minute each): a new consultation goes to its owner's group, else the
     * least loaded one. staffChatId stays the home group (admins, disputes, desk-wide notices) and takes
     * consultations only when listed here. Unset: staffChatId alone, with every expert, as before.
     */
    staffGroups: z
      .array(
        z.strictObject({
          chatId: z.number().int(),
          experts: z.array(z.number().int().positive()).default([]),
        }),
      )
      .optional(),
    /**
     * The desk's anti-flood (src/routing/antiflood.ts): at most `perMinute` of a client's messages go into the topic
     * one by one in any minute; the rest go as one digest. Unset: the deployment's `antiFlood`. 0 = off.
     */
    antiFlood: z.strictObject({ perMinute: z.number().int().min(0).max(1000) }).optional(),
    /** Messages from staff in a topic that start with this prefix stay in the topic. */
    internalNotePrefix: z.string().min(1).default('//'),
    /** Minutes a pre-checkout capacity hold lasts before the slot is freed. */
    holdMinutes: z.number().int().positive().default(30),
    /**
     * Minutes a place freed on a full start stays reserved for the first client on its waitlist
     * (src/orders/waitlist.ts); unbought by then, it passes to the next in line.
     */
    waitlistHoldMinutes: z.number().int().positive().max(10_080).default(120),
    /** Reminders (src/lifecycle): to the experts before an appeal's due time, to the client before the window ends. */
    reminders: z
      .strictObject({
        /** Business minutes before an appeal's due time the topic is reminded (0 = no reminder). */
        beforeDueBusinessMinutes: z.number().nonnegative().default(30),
        /** Minutes before access_until the client is told the window closes soon (0 = no notice). */
        beforeCloseMinutes: z.number().nonnegative().default(60),
      })
      .prefault({}),
    /** Experts (src/experts): names on cards, days off, canned replies. */
    expertSettings: z
      .strictObject({
        /** Per staff user id: the name shown on cards and topic titles (else their Telegram name, else the id). */
        names: z.record(z.string().regex(/^\d+$/), z.string().min(1).max(64)).default({}),
        /** Per staff user id: weekdays ("sat") or dates ("2026-12-31", desk-local) with no new assignments. */
        daysOff: z
          .record(z.string().regex(/^\d+$/), z.array(z.union([z.enum(WEEKDAYS), isoDate])))
          .default({}),
        /** Canned replies: `/s NAME` in a topic sends the text (per language, or one text) as the expert's answer. */
        snippets: z
          .record(
            z.string().regex(SNIPPET_NAME, 'expected a snippet name of a-z, 0-9, "_" or "-"'),
            z.union([z.string().min(1), localized]),
          )
          .default({}),
      })
      .prefault({}),
    /** Product decisions with today's values as defaults (./rules.schema.ts): promises, windows, zones, languages. */
    rules: rulesSchema,
  })
  .superRefine((d, ctx) => {
    if (!d.rules.languages.includes(d.defaultLanguage))
      ctx.addIssue({
        code: 'custom',
        path: ['rules', 'languages'],
        message: `must include the desk's default language "${d.defaultLanguage}"`,
      })
    const staff = new Set([...d.staff.admins, ...d.staff.experts])
    if (d.staff.owner !== undefined && !d.staff.admins.includes(d.staff.owner))
      ctx.addIssue({ code: 'custom', path: ['staff', 'owner'], message: 'not one of staff.admins' })
    d.tariffs.forEach((t, i) => {
      if (t.expert !== undefined && !staff.has(t.expert))
        ctx.addIssue({
          code: 'custom',
          path: ['tariffs', i, 'expert'],
          message: 'not one of staff.experts or staff.admins',
        })
    })
    if (d.staffGroups?.length && d.staffChatId === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['staffChatId'],
        message: 'required when staffGroups is set (the home group)',
      })
    const chats = new Set<number>()
    d.staffGroups?.forEach((g, i) => {
      if (chats.has(g.chatId))
        ctx.addIssue({ code: 'custom', path: ['staffGroups', i, 'chatId'], message: 'listed twice' })
      chats.add(g.chatId)
      g.experts.forEach((e, j) => {
        if (!staff.has(e))
          ctx.addIssue({
            code: 'custom',
            path: ['staffGroups', i, 'experts', j],
            message: 'not one of staff.experts or staff.admins',
          })
      })
    })
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
    let compiled: ReturnType<typeof compileSchedule> | undefined
    try {
      compiled = compileSchedule(d.schedule)
    } catch (e) {
      if (!(e instanceof ScheduleConfigError)) throw e
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: e.message })
    }
    const planCodes = new Set<string>()
    d.plans.forEach((p, i) => {
      check(p.title, ['plans', i, 'title'])
      check(p.description, ['plans', i, 'description'])
      check(p.terms.text, ['plans', i, 'terms', 'text'])
      if (planCodes.has(p.code))
        ctx.addIssue({
          code: 'custom',
          path: ['plans', i, 'code'],
          message: `duplicate plan code "${p.code}"`,
        })
      planCodes.add(p.code)
    })
    // A scheduled tariff's slots must start while the desk works (not on a holiday, not outside its hours).
    d.tariffs.forEach((t, i) => {
      t.slots.forEach((s, j) => {
        const at = DateTime.fromISO(s, { setZone: true })
        if (!at.isValid || !/[zZ]|[+-]\d\d:?\d\d$/.test(s))
          ctx.addIssue({
            code: 'custom',
            path: ['tariffs', i, 'slots', j],
            message: `"${s}" is not an ISO instant with an offset (e.g. 2026-12-07T10:00:00+03:00)`,
          })
        else if (compiled && !isOpen(compiled, at.toJSDate()))
          ctx.addIssue({
            code: 'custom',
            path: ['tariffs', i, 'slots', j],
            message: `"${s}" is outside the desk's working hours (schedule: weekly hours, holidays)`,
          })
      })
    })
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
export type DeskConfig = z.infer<typeof deskSchema>

/** An allowed model and its prices per 1M tokens, in the minor unit of `llm.currency` (e.g. cents). */
const llmModel = z.strictObject({
  id: z.string().min(1),
  inputPer1M: z.number().nonnegative(),
  outputPer1M: z.number().nonnegative(),
  /** The request field that caps the output: most OpenAI-compatible servers take max_tokens; OpenAI's newer models max_completion_tokens. */
  maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
})

/** A desk's AI drafting settings (all optional: unset = `llm.drafting`). */
const draftingOverrides = z.strictObject({
  enabled: z.boolean().optional(),
  /** One of `llm.models`; default `llm.defaultModel`. */
  model: z.string().min(1).optional(),
  /** The desk's system instructions for drafts (tone, scope, what never to promise). */
  instructions: z.string().optional(),
  /** Drafts one expert may request per desk-local day; null = no cap. */
  expertDailyCap: z.number().int().positive().nullable().optional(),
  /** The desk's drafting budget per desk-local calendar month; null = no budget line. */
  monthlyBudget: z
    .strictObject({ unit: z.enum(['money', 'tokens']), amount: z.number().int().positive() })
    .nullable()
    .optional(),
  /** Drafts running at once on the desk (admitted, provider call not finished). */
  concurrency: z.number().int().positive().optional(),
})

const llm = z
  .strictObject({
    /** Any OpenAI-compatible chat-completions endpoint. The key comes from LLM_API_KEY only. */
    baseUrl: z.url().default('https://api.openai.com/v1'),
    /** What the prices and money budgets are in (shown to staff): e.g. USD with 100 minor units (cents). */
    currency: z.string().min(1).default('USD'),
    minorUnitsPerMajor: z.number().int().positive().default(100),
    /** The allowlist: drafts use only these models. Empty = drafting not configured. */
    models: z.array(llmModel).default([]),
    defaultModel: z.string().min(1).optional(),
    /** max_tokens of every draft request: the output part of the reserved upper bound. */
    maxOutputTokens: z.number().int().positive().max(16_000).default(800),
    /** The prompt is trimmed (oldest Q&A first) to fit this estimate. */
    maxPromptTokens: z.number().int().positive().default(6000),
    /** One attempt, no SDK retries; past this the outcome is unknown (the hold stays until reconciled). */
    timeoutMs: z.number().int().min(1000).max(300_000).default(60_000),
    /** Defaults for every desk... */
    drafting: z
      .strictObject({
        enabled: z.boolean().default(true),
        instructions: z.string().default(''),
        expertDailyCap: z.number().int().positive().nullable().default(20),
        monthlyBudget: z
          .strictObject({ unit: z.enum(['money', 'tokens']), amount: z.number().int().positive() })
          .nullable()
          .default(null),
        concurrency: z.number().int().positive().default(2),
      })
      .prefault({}),
    /** ...and per desk slug. */
    desks: z.record(z.string(), draftingOverrides).default({}),
  })
  .superRefine((l, ctx) => {
    const ids = new Set(l.models.map((m) => m.id))
    if (l.defaultModel !== undefined && !ids.has(l.defaultModel))
      ctx.addIssue({ code: 'custom', path: ['defaultModel'], message: 'not one of llm.models' })
    if (l.models.length > 0 && l.defaultModel === undefined)
      ctx.addIssue({ code: 'custom', path: ['defaultModel'], message: 'required when llm.models is set' })
    for (const [slug, d] of Object.entries(l.desks))
      if (d.model !== undefined && !ids.has(d.model))
        ctx.addIssue({ code: 'custom', path: ['desks', slug, 'model'], message: 'not one of llm.models' })
  })
export type LlmConfig = z.infer<typeof llm>

export const configSchema = z.strictObject({
  mode: z.enum(['polling', 'webhook']).default('polling'),
  http: z
    .strictObject({
      host: z.string().default('0.0.0.0'),
      port: z.number().int().min(0).max(65535).default(8080),
    })
    .prefault({}),
  webhook: z
    .strictObject({
      /** Public HTTPS base URL Telegram calls; the desk's path /telegram/<slug> is appended. */
      publicUrl: z.url().optional(),
    })
    .prefault({}),
  log: z
    .strictObject({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info') })
    .prefault({}),
  ledger: z
    .strictObject({
      /** What happens when a commit's actual exceeds the reserved amount: record it all, or cap it and flag it. */
      overrunPolicy: z.enum(['allow', 'cap']).default('allow'),
    })
    .prefault({}),
  /** AI drafting: provider, model allowlist with prices, limits; per-desk settings under llm.desks.<slug>. */
  llm: llm.prefault({}),
  /** The staff dashboard, a Telegram Mini App served at <publicUrl>/dashboard/<desk slug>/ (src/dashboard). */
  dashboard: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Public HTTPS base URL of this server (Telegram opens Mini Apps over HTTPS only); unset = no buttons. */
      publicUrl: z.url().optional(),
      /** Launch data (initData) older than this is refused: it is the only credential the page has. */
      authMaxAgeSeconds: z.number().int().positive().max(86_400).default(3600),
      /** At start, set the chat menu button of each staff member's private chat with the bot to the dashboard. */
      menuButton: z.boolean().default(true),
      /** Per desk slug: the short name of a Mini App made with BotFather's /newapp; unset = the bot's Main Mini App. */
      appNames: z.record(z.string(), z.string().regex(/^[A-Za-z0-9_]{3,30}$/)).default({}),
      /** Where the built client is (`npm run build` writes dist/web). */
      webDir: z.string().default('dist/web'),
    })
    .prefault({}),
  /**
   * Telegram's limits, one budget per limit shared by every process (src/telegram/budget.ts, README "Telegram's
   * limits"): each is `count` sends in any `seconds`. `windowScale` multiplies every window (benchmarks and tests
   * run Telegram's windows scaled down; env TELEGRAM_WINDOW_SCALE overrides it); `marginMs` is added to each window
   * for the time between our clock and Telegram's (a send is counted when granted, it arrives a round trip later).
   */
  telegramLimits: z
    .strictObject({
      bot: z
        .strictObject({ count: z.number().int().positive(), seconds: z.number().positive() })
        .default({ count: 30, seconds: 1 }),
      group: z
        .strictObject({ count: z.number().int().positive(), seconds: z.number().positive() })
        .default({ count: 20, seconds: 60 }),
      chat: z
        .strictObject({ count: z.number().int().positive(), seconds: z.number().positive() })
        .default({ count: 3, seconds: 3 }),
      windowScale: z.number().positive().max(1).default(1),
      marginMs: z.number().int().min(0).max(5000).default(250),
      enabled: z.boolean().default(true),
      /** Each process keeps its own budget (as the old in-process throttler did): only to show a test can fail. */
      perProcess: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * Anti-flood (src/routing/antiflood.ts): at most `perMinute` of a client's messages go into the topic one by one
   * in any minute (scaled by telegramLimits.windowScale); the rest wait and go as one digest message. 0 = off.
   */
  antiFlood: z.strictObject({ perMinute: z.number().int().min(0).max(1000).default(0) }).prefault({}),
  desks: z.array(deskSchema).min(1),
})
export type AppConfig = z.infer<typeof configSchema>
