import { InlineKeyboard } from 'grammy'
import type { Language } from '../../../config/schema'
import type { DeskSettings } from '../../../settings/settings'
import { WEEKDAYS } from '../../../time/business-time'

/**
 * What /settings shows: each screen drawn from the settings row as read (its version goes into every button that
 * writes, so a write is made against what the editor saw). Callback data (all under 64 bytes):
 * st:home | st:tl | st:t:<code> | st:tp:<code>:<v>:<0|1> | st:td:<code>:<v> | st:tD:<code>:<v> | st:te:<code>:<f>:<v>
 * | st:tn:<v> | st:pl | st:p:<code> | st:pe:<code>:<f>:<v> | st:pp:<code>:<v>:<0|1> | st:h | st:hw:<day>:<v> | st:hz | st:hZ:<i>:<v>
 * | st:hh:<v> | st:hx:<date>:<v> | st:he:<v> | st:hX:<date>:<v> | st:x | st:xe:<terms|privacy>:<lang>:<v> | st:cancel
 * | st:pn:<v> | st:pd:<code>:<v> | st:pD:<code>:<v> | st:af | st:ed | st:eo:<user>:<v> | st:g | st:gu:<chat>:<v>
 * | st:gU:<chat>:<v> | st:r | st:re:<rule>:<v> (./desk-views.ts). A tariff's <f> is a field or a short name: sla, cap, slotCap, breach, refund.
 */
export type T = (key: string, params?: Record<string, string | number>) => string
export interface View {
  text: string
  kb: InlineKeyboard
}

/** A zone as a city name (the client's time zone picker's words); the zone itself where there is none. */
export const zoneName = (t: T, zone: string) => t('tz-city', { zone: zone.replaceAll('/', '-'), name: zone })

export function homeView(t: T): View {
  return {
    text: t('st-home'),
    kb: new InlineKeyboard()
      .text(t('st-btn-tariffs'), 'st:tl')
      .text(t('st-btn-plans'), 'st:pl')
      .row()
      .text(t('st-btn-hours'), 'st:h')
      .text(t('st-btn-texts'), 'st:x')
      .row()
      .text(t('st-btn-groups'), 'st:g')
      .text(t('st-btn-experts'), 'st:ed')
      .row()
      .text(t('st-btn-antiflood'), 'st:af')
      .text(t('st-btn-rules'), 'st:r'),
  }
}

const title = (x: { title: Partial<Record<Language, string>> }, s: DeskSettings, lang: Language) =>
  x.title[lang] ?? x.title[s.doc.defaultLanguage] ?? ''

export function tariffListView(t: T, s: DeskSettings, lang: Language): View {
  const kb = new InlineKeyboard()
  for (const x of s.doc.tariffs)
    kb.text(
      t(x.paused ? 'st-tariff-button-paused' : 'st-tariff-button', {
        title: title(x, s, lang),
        price: x.priceStars,
      }),
      `st:t:${x.code}`,
    ).row()
  kb.text(t('st-btn-new-tariff'), `st:tn:${s.version}`).row().text(t('st-btn-back'), 'st:home')
  return { text: t('st-tariffs', { count: s.doc.tariffs.length }), kb }
}

export function tariffView(t: T, s: DeskSettings, code: string, lang: Language): View | undefined {
  const x = s.doc.tariffs.find((y) => y.code === code)
  if (!x) return undefined
  const v = s.version
  const kb = new InlineKeyboard()
    .text(t('st-btn-price'), `st:te:${code}:priceStars:${v}`)
    .text(t('st-btn-title'), `st:te:${code}:title:${v}`)
    .row()
    .text(t('st-btn-questions'), `st:te:${code}:appeals:${v}`)
    .text(t('st-btn-window'), `st:te:${code}:windowHours:${v}`)
    .row()
    .text(t('st-btn-sla'), `st:te:${code}:sla:${v}`)
    .text(t('st-btn-capacity'), `st:te:${code}:cap:${v}`)
    .row()
  if (x.startMode === 'scheduled')
    kb.text(t('st-btn-slots'), `st:te:${code}:slots:${v}`)
      .text(t('st-btn-slot-capacity'), `st:te:${code}:slotCap:${v}`)
      .row()
  kb.text(t('st-btn-breach'), `st:te:${code}:breach:${v}`)
    .text(t('st-btn-refund'), `st:te:${code}:refund:${v}`)
    .row()
    .text(t('st-btn-topups'), `st:te:${code}:topUps:${v}`)
    .row()
    .text(t(x.paused ? 'st-btn-resume' : 'st-btn-pause'), `st:tp:${code}:${v}:${x.paused ? 0 : 1}`)
    .text(t('st-btn-delete'), `st:td:${code}:${v}`)
    .row()
    .text(t('st-btn-back'), 'st:tl')
  const b = x.breachPolicy
  return {
    text: [
      t('st-tariff', {
        title: title(x, s, lang),
        state: t(x.paused ? 'st-state-paused' : 'st-state-on-sale'),
        price: x.priceStars,
        hours: x.windowHours,
        questions: x.appeals,
        sla: x.slaBusinessHours,
        mode: t(`st-mode-${x.startMode}`),
      }),
      t('st-tariff-more', {
        capacity: x.dailyCapacity,
        breach: t(`st-breach-${b.kind}`, { hours: b.kind === 'extend_window' ? b.hours : 0 }),
        refund: t(`st-refund-${x.refundPolicy}`),
        topUps:
          x.topUps
            .map((u) =>
              u.kind === 'questions'
                ? t('st-topup-questions', { n: u.questions, price: u.priceStars })
                : t('st-topup-hours', { n: u.hours, price: u.priceStars }),
            )
            .join(', ') || '—',
      }),
      ...(x.startMode === 'scheduled'
        ? [t('st-tariff-slots', { slots: x.slots.join(', ') || '—', per: x.slotCapacity })]
        : []),
    ].join('\n'),
    kb,
  }
}

export function deleteConfirmView(
  t: T,
  s: DeskSettings,
  code: string,
  lang: Language,
  kind: 't' | 'p' = 't',
): View | undefined {
  const x = (kind === 't' ? s.doc.tariffs : s.doc.plans).find((y) => y.code === code)
  if (!x) return undefined
  return {
    text: t(kind === 't' ? 'st-delete-confirm' : 'st-plan-delete-confirm', { title: title(x, s, lang) }),
    kb: new InlineKeyboard()
      .text(t('st-btn-delete-yes'), `st:${kind}D:${code}:${s.version}`)
      .text(t('st-btn-back'), `st:${kind}:${code}`),
  }
}

export function planListView(t: T, s: DeskSettings, lang: Language): View {
  const kb = new InlineKeyboard()
  for (const p of s.doc.plans)
    kb.text(
      t(p.paused ? 'st-plan-button-paused' : 'st-plan-button', {
        title: title(p, s, lang),
        price: p.priceStars,
      }),
      `st:p:${p.code}`,
    ).row()
  kb.text(t('st-btn-new-plan'), `st:pn:${s.version}`).row().text(t('st-btn-back'), 'st:home')
  return { text: t('st-plans', { count: s.doc.plans.length }), kb }
}

export function planView(t: T, s: DeskSettings, code: string, lang: Language): View | undefined {
  const p = s.doc.plans.find((y) => y.code === code)
  if (!p) return undefined
  const v = s.version
  return {
    text: [
      t('st-plan', {
        title: title(p, s, lang),
        state: t(p.paused ? 'st-plan-state-paused' : 'st-state-on-sale'),
        price: p.priceStars,
        questions: p.questions,
      }),
      t('st-plan-more', {
        sla: p.slaBusinessHours,
        refund: t(`st-plan-refund-${p.refundPolicy}`),
        carry: p.carryOver === 'none' ? 0 : p.carryOver.capped,
      }),
    ].join('\n'),
    kb: new InlineKeyboard()
      .text(t('st-btn-price'), `st:pe:${code}:priceStars:${v}`)
      .text(t('st-btn-title'), `st:pe:${code}:title:${v}`)
      .row()
      .text(t('st-btn-questions'), `st:pe:${code}:questions:${v}`)
      .text(t('st-btn-carry'), `st:pe:${code}:carry:${v}`)
      .row()
      .text(t('st-btn-sla'), `st:pe:${code}:sla:${v}`)
      .text(t('st-btn-refund'), `st:pe:${code}:refund:${v}`)
      .row()
      .text(t(p.paused ? 'st-btn-resume' : 'st-btn-pause'), `st:pp:${code}:${v}:${p.paused ? 0 : 1}`)
      .text(t('st-btn-delete'), `st:pd:${code}:${v}`)
      .row()
      .text(t('st-btn-back'), 'st:pl'),
  }
}

export function hoursView(t: T, s: DeskSettings): View {
  const sch = s.doc.schedule
  const v = s.version
  const days = WEEKDAYS.map((d) =>
    t('st-hours-day', { day: t(`st-day-${d}`), hours: (sch.weekly[d] ?? []).join(', ') || t('st-day-off') }),
  )
  const kb = new InlineKeyboard()
  WEEKDAYS.forEach((d, i) => {
    kb.text(t(`st-day-${d}`), `st:hw:${d}:${v}`)
    if (i === 3) kb.row()
  })
  kb.row().text(t('st-btn-zone'), 'st:hz').row()
  kb.text(t('st-btn-add-holiday'), `st:hh:${v}`).text(t('st-btn-add-extra'), `st:he:${v}`).row()
  for (const h of sch.holidays) kb.text(t('st-btn-remove-date', { date: h }), `st:hx:${h}:${v}`).row()
  for (const d of Object.keys(sch.extraWorkingDays))
    kb.text(t('st-btn-remove-date', { date: d }), `st:hX:${d}:${v}`).row()
  kb.text(t('st-btn-back'), 'st:home')
  const extra = Object.entries(sch.extraWorkingDays).map(([d, h]) => `${d} ${h.join(', ')}`)
  return {
    text: [
      t('st-hours', { zone: zoneName(t, sch.timezone) }),
      ...days,
      '',
      t('st-holidays', { dates: sch.holidays.join(', ') || '—' }),
      t('st-extra-days', { dates: extra.join('; ') || '—' }),
    ].join('\n'),
    kb,
  }
}

export function zonesView(t: T, s: DeskSettings): View {
  const kb = new InlineKeyboard()
  s.doc.rules.zones.forEach((z, i) => {
    kb.text(zoneName(t, z), `st:hZ:${i}:${s.version}`)
    if (i % 2 === 1) kb.row()
  })
  kb.row().text(t('st-btn-back'), 'st:h')
  return { text: t('st-zone-pick', { zone: zoneName(t, s.doc.schedule.timezone) }), kb }
}

export function textsView(t: T, s: DeskSettings): View {
  const kb = new InlineKeyboard()
  for (const l of s.doc.rules.languages)
    kb.text(t('st-btn-terms', { lang: t(`st-lang-${l}`) }), `st:xe:terms:${l}:${s.version}`)
      .text(t('st-btn-privacy', { lang: t(`st-lang-${l}`) }), `st:xe:privacy:${l}:${s.version}`)
      .row()
  kb.text(t('st-btn-back'), 'st:home')
  return { text: t('st-texts', { version: s.doc.terms.version }), kb }
}
