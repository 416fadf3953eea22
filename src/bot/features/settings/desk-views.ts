import { InlineKeyboard } from 'grammy'
import { boundGroups } from '../../../settings/removals'
import type { DeskSettings } from '../../../settings/settings'
import type { T, View } from './views'

/** /settings screens of the desk as a whole: staff groups (unbind), experts' days off. Callback data in ./views.ts. */

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
