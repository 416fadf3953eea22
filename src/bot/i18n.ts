import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { I18n } from '@grammyjs/i18n'
import type { Language } from '../config/schema'
import { useTimeWords } from '../time/words'

export const LOCALES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'locales')

/**
 * Fluent files per language (src/bot/locales/<lang>/*.ftl, one file per feature). useIsolating is off: the Unicode
 * isolation marks Fluent adds around variables show up as garbage in some Telegram clients.
 */
export function createI18n(defaultLocale: Language = 'ru'): I18n<any> {
  const i18n = new I18n<any>({
    defaultLocale,
    fluentBundleOptions: { useIsolating: false },
    localeNegotiator: (ctx: any) => ctx.lang,
  })
  i18n.loadLocalesDirSync(LOCALES_DIR)
  // The formatters of dates and durations (src/time) take their words from these files too.
  useTimeWords((lang, key, params) => i18n.t(lang, key, params))
  return i18n
}
