import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { settle } from '../../src/demo/settle'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'
import { termsHash } from '../../src/orders/orders.service'
import { media, type RecordedCall, TgErrors } from '../support/bot-api'
import { type DeskWorld, EXPERT_ID, STAFF_CHAT_ID, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'
import { fastForward } from '../support/lifecycle-clock'
import { tariff } from './payments-support'

/**
 * The words of the demo's story (issue 27), in both languages: one consultation from /start to the report, played
 * through the stand-in the way `npm run demo` plays it (a 2-hour window, its clock moved forward instead of waiting).
 * Every text the bot sent (messages, edits, pop-ups, buttons, invoices, topic names, the transcript file) is read
 * for what a person would never write: raw zone ids, snake_case codes, doubled brackets, a count with the wrong
 * plural form, «стол» and «топик», English codes on a Russian desk.
 */

type Lang = 'en' | 'ru'

interface Seen {
  to: string
  text: string
}

const worlds: DeskWorld[] = []
afterAll(async () => {
  for (const w of worlds) await w.stop()
})

/** Every human-readable text of one recorded call. */
function textsOf(c: RecordedCall): string[] {
  const p = c.payload as Record<string, any>
  const out: string[] = []
  for (const k of ['text', 'caption', 'title', 'description', 'name'])
    if (typeof p[k] === 'string') out.push(p[k])
  const rows: any[][] = p.reply_markup?.inline_keyboard ?? p.reply_markup?.keyboard ?? []
  for (const b of rows.flat()) if (typeof b?.text === 'string') out.push(b.text)
  if (p.document?.data) out.push(String(p.document.data.toString('utf8')))
  if (Array.isArray(p.commands)) for (const cmd of p.commands) out.push(String(cmd.description))
  return out
}

async function play(lang: Lang): Promise<Seen[]> {
  const w = await startDeskWorld({
    admin: { first_name: 'Ada', language_code: lang },
    expert: { first_name: 'Ed', language_code: lang },
    configure: (c) => {
      const d = c.desks[0]!
      d.defaultLanguage = lang
      // As the demo's desk: the expert's name is configured, so no card or topic title falls back to an id.
      d.expertSettings.names = { ...d.expertSettings.names, [String(EXPERT_ID)]: 'Ed' }
      // The test desk's own name says «стол»: that is the configured name, not our words.
      d.name = { en: 'Architecture reviews', ru: 'Разбор архитектуры' }
      d.reminders = { ...d.reminders, beforeDueBusinessMinutes: 15, beforeCloseMinutes: 30 }
      d.tariffs.unshift(
        tariff({
          code: 'sprint',
          title: { en: 'Review sprint, 2 h', ru: 'Разбор-спринт, 2 ч' },
          description: { en: 'Three questions in 2 hours.', ru: 'Три вопроса за 2 часа.' },
          priceStars: 300,
          windowHours: 2,
          appeals: 3,
          slaBusinessHours: 1,
          dailyCapacity: 10,
          breachPolicy: { kind: 'extend_window', hours: 1 },
          topUps: [
            { kind: 'questions', questions: 2, priceStars: 100 },
            { kind: 'hours', hours: 1, priceStars: 60 },
          ],
        }),
      )
    },
  })
  worlds.push(w)
  const { tg } = w
  const db = w.deps.db
  const anna = tg.user({ first_name: 'Anna', username: 'anna_dev', language_code: lang })
  const ed = w.expert
  const ada = w.admin
  const step = () => settle(db, tg, TEST_BOT_ID, 20_000)
  const push = async (u: Parameters<typeof tg.push>[1]) => {
    await tg.push(TEST_BOT_ID, u)
  }
  const after = async (method: string | string[], chat: number, act: () => Promise<void>) => {
    const since = tg.mark()
    await act()
    await tg.waitFor(method, (p) => Number(p.chat_id) === chat, { since })
    await step()
  }

  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/start')))
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/help')))
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/dashboard')))
  await after(['editMessageText', 'sendMessage'], anna.id, () => push(tg.callback(anna, 'tf:list')))
  await after(['editMessageText', 'sendMessage'], anna.id, () => push(tg.callback(anna, 'tf:show:sprint')))

  // Pays 300 Stars.
  const buy = async (data: string, amount: number) => {
    const since = tg.mark()
    await push(tg.callback(anna, data))
    const invoice = await tg.waitFor('sendInvoice', { chat_id: anna.id }, { since })
    const payload = String(invoice.payload.payload)
    const q = tg.preCheckout(anna, { invoice_payload: payload, total_amount: amount })
    await push(q)
    await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id })
    await push(tg.successfulPayment(anna, { invoice_payload: payload, total_amount: amount }))
  }
  await buy(`tf:buy:sprint:${termsHash(w.t.desk.terms.version)}`, 300)
  await tg.waitFor('pinChatMessage', { chat_id: STAFF_CHAT_ID })
  await step()
  const c = await db
    .selectFrom('consultation')
    .select('id')
    .where('user_id', '=', anna.id)
    .executeTakeFirstOrThrow()
  const route = await db
    .selectFrom('desk_route')
    .select('message_thread_id')
    .where('consultation_id', '=', c.id)
    .executeTakeFirstOrThrow()
  const thread = route.message_thread_id

  // The first question, with a photo; Ed answers; a clarification.
  const q1 = tg.privateMessage(anna, { photo: media.photo(), caption: 'Where would you start?' })
  await after('copyMessage', STAFF_CHAT_ID, () => push(q1))
  await tg.waitFor('sendMessage', (p) => Number(p.chat_id) === EXPERT_ID)
  await step()
  await after('copyMessage', anna.id, () =>
    push(tg.groupTopicMessage(STAFF_CHAT_ID, thread, ed, 'Start with the pool.')),
  )
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, 'Is the rest the JSON parsing?')))
  // A video message Telegram refuses to copy: the client is asked to send it otherwise, the staff are told in words.
  const vn = tg.privateMessage(anna, { video_note: media.videoNote() })
  tg.fail('copyMessage', TgErrors.messageCantBeCopied, {
    when: (p) => Number(p.message_id) === vn.message.message_id,
    times: Infinity,
  })
  await after('sendMessage', anna.id, () => push(vn))
  await tg.waitFor('sendMessage', (p) => Number(p.chat_id) === STAFF_CHAT_ID && /⚠️/.test(String(p.text)))
  await step()
  // A staff voice message Telegram refuses to deliver: the topic is told why, in the desk's language.
  const voice = tg.groupTopicMessage(STAFF_CHAT_ID, thread, ed, { voice: media.voice() })
  tg.fail('copyMessage', TgErrors.protectedContent, {
    when: (p) => Number(p.message_id) === voice.message.message_id,
    times: Infinity,
  })
  const since = tg.mark()
  await push(voice)
  await tg.waitFor('sendMessage', (p) => Number(p.chat_id) === STAFF_CHAT_ID && /⚠️/.test(String(p.text)), {
    since,
  })
  await step()

  const advanceTo = async (queue: string) => {
    const job = await sql<{ start_after: Date }>`select start_after from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = ${queue} and state = 'created'
        and (data->>'consultationId' = ${String(c.id)}
             or data->>'appealId' in (select id::text from desk_appeal where consultation_id = ${c.id}))
      order by start_after limit 1`.execute(db)
    const at = job.rows[0]?.start_after
    if (!at) throw new Error(`no ${queue} job scheduled`)
    const now = (await sql<{ now: Date }>`select now() as now`.execute(db)).rows[0]!.now
    await fastForward(db, c.id, at.getTime() - now.getTime() + 1000)
  }

  await advanceTo('sla.remind')
  await tg.waitFor(
    'sendMessage',
    (p) => Number(p.chat_id) === STAFF_CHAT_ID && p.message_thread_id === thread,
  )
  await step()
  await after('copyMessage', anna.id, () =>
    push(tg.groupTopicMessage(STAFF_CHAT_ID, thread, ed, 'Mostly, yes.')),
  )
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/status')))
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/timezone')))
  // Picks Moscow (index 1): from then on times are in the zone she chose.
  await after(['editMessageText', 'sendMessage'], anna.id, () => push(tg.callback(anna, 'tz:set:1')))
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, '/status')))

  await advanceTo('lifecycle.closing-soon')
  await tg.waitFor('sendMessage', (p) => Number(p.chat_id) === anna.id && /⏳/.test(String(p.text)))
  await step()
  await buy(`tu:${c.id}:0`, 100)
  await tg.waitFor('sendMessage', (p) => Number(p.chat_id) === anna.id && /100 ⭐/.test(String(p.text)))
  await step()

  await advanceTo('lifecycle.close')
  await tg.waitFor('closeForumTopic', { chat_id: STAFF_CHAT_ID })
  await step()
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, 'One more thing?')))
  await after('sendMessage', anna.id, () => push(tg.callback(anna, `rate:${c.id}:5`)))
  await after('sendMessage', anna.id, () => push(tg.callback(anna, `rate:cm:${c.id}`)))
  await after('sendMessage', anna.id, () => push(tg.privateText(anna, 'Thanks, Ed!')))
  await after('sendDocument', anna.id, () => push(tg.callback(anna, `tr:get:${c.id}`)))
  await after('sendMessage', STAFF_CHAT_ID, () =>
    push(tg.groupTopicMessage(STAFF_CHAT_ID, undefined, ada, '/report')),
  )

  // The deadline the client reads carries a date_time entity over the readable text: Telegram shows it in the
  // reader's own zone and format, the text is the fallback.
  const receipt = tg.calls.find(
    (x) =>
      x.method === 'sendMessage' &&
      Number(x.payload.chat_id) === anna.id &&
      /(Question #|Вопрос №)1 (accepted|принят)/.test(String(x.payload.text)),
  )!
  const due = await db
    .selectFrom('desk_appeal')
    .select('due_at')
    .where('consultation_id', '=', c.id)
    .orderBy('number')
    .executeTakeFirstOrThrow()
  const text = String(receipt.payload.text)
  const entity = (receipt.payload.entities as any[]).find((e) => e.type === 'date_time')
  expect(entity).toMatchObject({ date_time_format: 'Dt' })
  expect(text.slice(entity.offset, entity.offset + entity.length)).toMatch(/^\d+ \S+ \d{4}, \d\d:\d\d /)
  // Moved with the consultation's clock by the fast-forwards since, so compared to the time it was sent.
  expect(entity.unix_time).toBeGreaterThan(Math.floor(due.due_at.getTime() / 1000))

  // A zone is named only when it is not the reader's own. Before /timezone, Anna reads times in the desk's zone,
  // which she did not pick: named in words. Once she picked Moscow (the desk's zone too), it is hers: no zone.
  const moscow = lang === 'ru' ? 'по Москве' : 'Moscow time'
  const textOf = (x: RecordedCall) => String(x.payload.text)
  const picked = tg.calls.findIndex((x) => /^(Time zone set|Часовой пояс установлен)/.test(textOf(x)))
  expect(picked).toBeGreaterThan(0)
  const toAnna = (from = 0) =>
    tg.calls
      .slice(from)
      .filter((x) => x.ok && x.method === 'sendMessage' && Number(x.payload.chat_id) === anna.id)
  expect(text).toContain(` ${moscow}`)
  const [statusBefore, statusAfter] = toAnna().filter((x) => /^(Your orders|Ваши заказы)/.test(textOf(x)))
  expect(textOf(statusBefore!)).toMatch(
    lang === 'ru' ? /^Ваши заказы \(время по Москве\):/ : /^Your orders \(Moscow time\):/,
  )
  expect(textOf(statusAfter!)).toMatch(/^(Your orders|Ваши заказы):\n/)
  const closing = toAnna(picked).find((x) => /⏳/.test(textOf(x)))!
  expect(textOf(closing)).toMatch(/\d+ \S+ \d{4}, \d\d:\d\d/)
  expect(textOf(closing)).not.toContain(moscow)
  // Staff read every time in the desk's zone, their own: no zone is named to them either.
  const toStaff = tg.calls.filter(
    (x) =>
      x.ok &&
      (x.method === 'sendMessage' || x.method === 'editMessageText') &&
      Number(x.payload.chat_id) === STAFF_CHAT_ID,
  )
  expect(toStaff.some((x) => /\d{4}, \d\d:\d\d/.test(textOf(x)))).toBe(true)
  expect(toStaff.map(textOf).filter((s) => s.includes(moscow))).toEqual([])

  const seen: Seen[] = []
  for (const call of tg.calls) {
    if (!call.ok || call.method === 'copyMessage' || call.method === 'copyMessages') continue
    // A command menu is written once per language: only the story's language is read here.
    const menuLang = (call.payload as { language_code?: string }).language_code
    if (call.method === 'setMyCommands' && (menuLang ?? 'en') !== lang) continue
    const chat = Number((call.payload as { chat_id?: unknown }).chat_id)
    const to = chat === anna.id ? 'client' : chat === STAFF_CHAT_ID ? 'staff' : `${call.method}:${chat}`
    for (const text of textsOf(call)) seen.push({ to, text })
  }
  return seen
}

/** The forms of a noun after a number: Intl's plural category -> the word. */
const NOUNS: Record<Lang, Record<string, string>[]> = {
  en: [
    { one: 'question', other: 'questions' },
    { one: 'message', other: 'messages' },
    { one: 'answer', other: 'answers' },
    { one: 'consultation', other: 'consultations' },
    { one: 'day', other: 'days' },
    { one: 'hour', other: 'hours' },
    { one: 'minute', other: 'minutes' },
    { one: 'draft', other: 'drafts' },
    { one: 'rating', other: 'ratings' },
    { one: 'payment', other: 'payments' },
  ],
  ru: [
    { one: 'вопрос', few: 'вопроса', many: 'вопросов' },
    { one: 'сообщение', few: 'сообщения', many: 'сообщений' },
    { one: 'ответ', few: 'ответа', many: 'ответов' },
    { one: 'консультация', few: 'консультации', many: 'консультаций' },
    { one: 'день', few: 'дня', many: 'дней' },
    { one: 'час', few: 'часа', many: 'часов' },
    { one: 'минута', few: 'минуты', many: 'минут' },
    { one: 'черновик', few: 'черновика', many: 'черновиков' },
    { one: 'оценка', few: 'оценки', many: 'оценок' },
    { one: 'платёж', few: 'платежа', many: 'платежей' },
  ],
}

/** What a person would not have written in `text`; empty when it reads fine. */
function faults(lang: Lang, text: string): string[] {
  const found: string[] = []
  const zone = /\b(Europe|Asia|America|Africa|Australia|Pacific|Atlantic|Indian|Etc)\/[A-Z][A-Za-z_]+/.exec(
    text,
  )
  if (zone) found.push(`a zone id: ${zone[0]}`)
  const brackets = /\)\s*\(/.exec(text)
  if (brackets)
    found.push(`doubled brackets: «${text.slice(Math.max(0, brackets.index - 30), brackets.index + 20)}»`)
  // snake_case codes, not in @usernames, /commands or file names.
  for (const m of text.matchAll(/(^|[\s(«"“:,])([a-z]+(?:_[a-z]+)+)(?=$|[\s).,:;»"”])/g))
    found.push(`a code: ${m[2]}`)
  const rules = new Intl.PluralRules(lang)
  for (const forms of NOUNS[lang]) {
    const all = new Set(Object.values(forms))
    for (const m of text.matchAll(/(?<![\d.,])(\d+) ([A-Za-zА-Яа-яЁё]+)/g)) {
      const word = m[2]!.toLowerCase()
      if (!all.has(word)) continue
      const want = forms[rules.select(Number(m[1]))] ?? forms.many ?? forms.other
      // Russian genitive after "из"/"до"/"больше" takes the "few"-looking singular genitive: «из 21 вопроса».
      const before = text.slice(Math.max(0, m.index - 8), m.index)
      if (lang === 'ru' && /(из|до|больше|меньше|более|менее|около) $/.test(before)) continue
      if (word !== want) found.push(`a count: «${m[0]}» (want «${m[1]} ${want}»)`)
    }
  }
  const rawId = /(👤|:)\s*id \d+/.exec(text)
  if (rawId) found.push(`an id where a name belongs: ${rawId[0]}`)
  if (lang === 'ru') {
    const kind =
      /\[(photo|video|video_note|voice|audio|document|animation|sticker|location|venue|contact|poll|dice|story)\]/.exec(
        text,
      )
    if (kind) found.push(`an English media name: ${kind[0]}`)
    const abbr = /\d+ (сообщ|дн)\./.exec(text)
    if (abbr) found.push(`a cut word: ${abbr[0]}`)
    const desk = /(^|[^а-яё])(стол(а|у|ом|е|ы|ов|ам|ами|ах)?)(?![а-яё])/i.exec(text)
    if (desk) found.push(`«${desk[2]}»`)
    if (/топик/i.test(text)) found.push('«топик»')
    const jargon = /\b(charge|state|source|policy|paid_waiting|caption|message\(s\)|Bad Request)\b/.exec(text)
    if (jargon) found.push(`English jargon: ${jargon[0]}`)
    const inDate = /принят в \d/.exec(text)
    if (inDate) found.push(`«в» before a date: ${inDate[0]}`)
  } else {
    const odd = /\b(\w+\(s\))|\bmore messages\b/.exec(text)
    if (odd && /\(s\)/.test(odd[0])) found.push(`a count: ${odd[0]}`)
  }
  return found
}

describe('the words of the demo story', () => {
  it('the checks catch what they are for', () => {
    expect(faults('ru', 'до 1 дек. 2026, 14:00 (Europe/Moscow, UTC+3) (4 ч рабочего времени)')).toHaveLength(
      2,
    )
    expect(faults('ru', 'Включено: 21 вопросов за период.')).toHaveLength(1)
    expect(faults('ru', 'Включено: 21 вопрос за период.')).toEqual([])
    expect(faults('en', 'Included: 1 questions per period.')).toHaveLength(1)
    expect(faults('en', 'Included: 2 questions per period.')).toEqual([])
    expect(faults('ru', 'Панель доступна только сотрудникам стола.')).toHaveLength(1)
    expect(faults('ru', 'сообщения остаются в топике')).toHaveLength(1)
    expect(faults('en', '(inbox_update, state parked)')).toHaveLength(1)
    expect(faults('ru', '✅ Вопрос №1 принят в 1 дек. 2026, 14:00.')).toHaveLength(1)
    expect(faults('ru', '«[photo] Where would you start?»')).toHaveLength(1)
    expect(faults('en', '🧑‍💼 Owner: id 900002')).toHaveLength(1)
  })

  for (const lang of ['ru', 'en'] as const) {
    it(`reads as a person wrote it: ${lang}`, { timeout: 120_000 }, async () => {
      const seen = await play(lang)
      expect(seen.length).toBeGreaterThan(30)
      const bad = seen.flatMap((s) =>
        faults(lang, s.text).map((f) => `${s.to}: ${f}\n    ${s.text.replace(/\n/g, '\n    ')}`),
      )
      expect(bad).toEqual([])
    })
  }
})
