/**
 * The words dates and durations are written with (units, zone names, media names) live in the locale files
 * (src/bot/locales/<lang>/time.ftl) like every other word. The formatters here sit on the ground floor and cannot
 * import the bot's i18n, so the i18n hands its translator over when it is created (src/bot/i18n.ts): a pure lookup
 * into files loaded at start, the same in every process, never state of its own. Before that (a unit test calling
 * a formatter alone) the English fallbacks below are used.
 */
export type TimeTranslator = (lang: string, key: string, params: Record<string, string | number>) => string

let translate: TimeTranslator | undefined

export function useTimeWords(t: TimeTranslator): void {
  translate = t
}

export function timeWord(
  lang: string,
  key: string,
  params: Record<string, string | number>,
  fallback: string,
): string {
  return translate ? translate(lang, key, params) : fallback
}
