import { InlineKeyboard } from 'grammy'
import { RULE_FIELDS, ruleValue } from '../../../settings/fields'
import { boundGroups } from '../../../settings/removals'
import type { DeskSettings } from '../../../settings/settings'
import { type T, type View, zoneName } from './views'

/**
 * /settings screens of the desk as a whole: staff groups (unbind), experts' days off, the desk's rules. Callback data
 * in ./views.ts.
 */

export function groupsView(t: T, s: DeskSettings, titles: Map<number, string>): View {
  const groups = boundGroups(s.doc)
  const name = (id: number) => titles.get(id) ?? String(id)
  const kb = new InlineKeyboard()
  for (const id of groups) kb.text(t('st-btn-unbind', { title: name(id) }), `st:gu:${id}:${s.version}`).row()
  kb.text(t('st-btn-back'), 'st:home')
  const lines = groups.map((id) =>
    t(id === s.doc.staffChatId ? 'st-group-home' : 'st-group-listed', { title: name(id) }),
  )
  return { text: [t('st-groups', { count: groups.length }), ...lines].join('\n'), kb }
}

export function unbindConfirmView(t: T, s: DeskSettings, chatId: number, title: string): View | undefined {
  if (!boundGroups(s.doc).includes(chatId)) return undefined
  const last = boundGroups(s.doc).length === 1
  return {
    text: t(last ? 'st-unbind-confirm-last' : 'st-unbind-confirm', { title }),
    kb: new InlineKeyboard()
      .text(t('st-btn-unbind-yes'), `st:gU:${chatId}:${s.version}`)
      .text(t('st-btn-back'), 'st:g'),
  }
}

export function expertsView(t: T, s: DeskSettings): View {
  const d = s.doc
  const people = [...new Set([...d.staff.experts, ...d.staff.admins])]
  const kb = new InlineKeyboard()
  const lines = [t('st-experts')]
  for (const id of people) {
    const name = d.expertSettings.names[String(id)] ?? String(id)
    const off = (d.expertSettings.daysOff[String(id)] ?? []).join(', ') || '—'
    lines.push(t('st-expert-line', { name, off }))
    kb.text(t('st-btn-days-off', { name }), `st:eo:${id}:${s.version}`).row()
  }
  kb.text(t('st-btn-back'), 'st:home')
  return { text: lines.join('\n'), kb }
}

/** The desk's rules (src/config/rules.schema.ts): each with its value in words and a button that edits it. */
export function rulesView(t: T, s: DeskSettings): View {
  const kb = new InlineKeyboard()
  const lines = [t('st-rules')]
  RULE_FIELDS.forEach((f, i) => {
    if (f === 'stallSeconds') lines.push('', t('st-rules-upkeep'))
    const v = ruleValue(s.doc, f)
    const value =
      f === 'zones'
        ? (v as string[]).map((z) => zoneName(t, z)).join(', ')
        : f === 'languages'
          ? (v as string[]).map((l) => t(`st-lang-${l}`)).join(', ')
          : String(v)
    lines.push(t('st-rule-line', { field: t(`st-field-${f}`), value }))
    kb.text(t(`st-field-${f}`), `st:re:${f}:${s.version}`)
    if (i % 2 === 1) kb.row()
  })
  kb.row().text(t('st-btn-back'), 'st:home')
  return { text: lines.join('\n'), kb }
}
