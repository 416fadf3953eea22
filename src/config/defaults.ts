import { IANAZone } from 'luxon'
import { LANGUAGES, type Language } from './primitives'

/**
 * The desk of a first run with nothing but a token (issue 24): no config file, so no staff group, no staff and no
 * tariffs (nothing is sold until it is set up from Telegram, src/settings/setup.ts), weekday hours 10-18 in the zone
 * of `TZ` (else UTC), the language of `DESK_LANGUAGE` (en or ru; default en), and plain terms and privacy texts in
 * both languages that the owner replaces. Written once into PostgreSQL as the desk's first settings (source 'seed').
 */
export function firstRunDesk(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const lang = (LANGUAGES as readonly string[]).includes(env.DESK_LANGUAGE ?? '')
    ? (env.DESK_LANGUAGE as Language)
    : 'en'
  const zone = env.TZ && IANAZone.isValidZone(env.TZ) ? env.TZ : 'UTC'
  const hours = ['10:00-18:00']
  return {
    slug: 'desk',
    name: { en: 'Consultations', ru: 'Консультации' },
    tokenEnv: 'BOT_TOKEN',
    defaultLanguage: lang,
    staff: { admins: [], experts: [] },
    schedule: { timezone: zone, weekly: { mon: hours, tue: hours, wed: hours, thu: hours, fri: hours } },
    tariffs: [],
    terms: {
      version: '1',
      text: {
        en:
          'A consultation is paid in Telegram Stars before it starts. What each tariff includes (questions, ' +
          'window, response time) and how refunds work is shown before you pay. Payment questions: /paysupport.',
        ru:
          'Консультация оплачивается звёздами Telegram до начала. Что входит в тариф (вопросы, окно, время ' +
          'ответа) и как работает возврат, показано до оплаты. Вопросы об оплате: /paysupport.',
      },
    },
    privacy: {
      en:
        'We keep your messages to the desk and your payments to provide the consultation and to account for it. ' +
        '/mydata sends you a copy of your data; /forget erases it (payments stay in the accounts).',
      ru:
        'Мы храним ваши сообщения и платежи, чтобы провести консультацию и учесть её. /mydata пришлёт копию ' +
        'ваших данных; /forget удалит их (платежи остаются в учёте).',
    },
  }
}
