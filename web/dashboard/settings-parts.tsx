import { useState } from 'preact/hooks'
import type { SettingsDto } from '../../src/dashboard/settings.model'
import type { T } from './i18n'

/**
 * The pieces of the settings page (web/dashboard/settings.tsx): a field with its Save, a confirmation, the zone
 * picker, the new tariff form.
 */

type Key = Parameters<T>[0]

/** A field's name in the page's words (the API names fields as the desk document does: priceStars, holiday...). */
export function fieldLabel(t: T, field: string): string {
  const key = `f-${field}` as Key
  const s = t(key)
  return s === `f-${field}` ? field : s
}

/** A labelled input with its own Save: what the chat asks for by typing, the same words read the same way. */
export function Field(props: {
  t: T
  name: string
  label: string
  value: string
  multiline?: boolean
  onSave: (value: string) => Promise<boolean>
}) {
  const [text, setText] = useState(props.value)
  const [busy, setBusy] = useState(false)
  const input = (e: Event) => setText((e.target as HTMLInputElement).value)
  return (
    <form
      class="field"
      data-field={props.name}
      onSubmit={async (e) => {
        e.preventDefault()
        setBusy(true)
        const ok = await props.onSave(text)
        setBusy(false)
        if (ok && props.value === '') setText('')
      }}
    >
      {props.multiline ? (
        <label>
          {props.label}
          <textarea name="value" rows={4} value={text} onInput={input} />
        </label>
      ) : (
        <label>
          {props.label}
          <input name="value" value={text} onInput={input} />
        </label>
      )}
      <button type="submit" disabled={busy || text === props.value}>
        {props.t('st-save')}
      </button>
    </form>
  )
}

export function Confirm(props: { t: T; label: string; onYes: () => void }) {
  const [asking, setAsking] = useState(false)
  if (!asking)
    return (
      <button type="button" class="danger" data-action="delete" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  return (
    <span class="confirm" role="alertdialog">
      {props.t('st-delete-confirm')}{' '}
      <button type="button" class="danger" data-action="delete-yes" onClick={props.onYes}>
        {props.t('st-delete-yes')}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        {props.t('cancel')}
      </button>
    </span>
  )
}

export function ZonePicker(props: { t: T; s: SettingsDto; onSave: (zone: string) => void }) {
  const [zone, setZone] = useState(props.s.schedule.timezone)
  return (
    <div class="row" data-field="zone">
      <label>
        {props.t('f-timezone')}
        <select name="zone" value={zone} onChange={(e) => setZone((e.target as HTMLSelectElement).value)}>
          {props.s.zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>
      <button type="button" disabled={zone === props.s.schedule.timezone} onClick={() => props.onSave(zone)}>
        {props.t('st-save')}
      </button>
    </div>
  )
}

const NEW = { code: '', title: '', priceStars: '', windowHours: '', appeals: '', slaBusinessHours: '' }

export function NewTariff(props: { t: T; onCreate: (b: Record<string, unknown>) => Promise<boolean> }) {
  const { t } = props
  const [open, setOpen] = useState(false)
  const [v, setV] = useState(NEW)
  const [mode, setMode] = useState<'immediate' | 'on_request'>('immediate')
  if (!open)
    return (
      <button type="button" data-action="new-tariff" onClick={() => setOpen(true)}>
        {t('st-new-tariff')}
      </button>
    )
  const num = (x: string) => (x.trim() === '' ? null : Number(x.replace(',', '.')))
  return (
    <form
      class="new-tariff"
      data-form="new-tariff"
      onSubmit={async (e) => {
        e.preventDefault()
        const ok = await props.onCreate({
          code: v.code,
          title: v.title,
          priceStars: num(v.priceStars),
          windowHours: num(v.windowHours),
          appeals: num(v.appeals),
          slaBusinessHours: num(v.slaBusinessHours),
          startMode: mode,
        })
        if (ok) {
          setV(NEW)
          setOpen(false)
        }
      }}
    >
      {(Object.keys(NEW) as (keyof typeof NEW)[]).map((k) => (
        <label key={k}>
          {fieldLabel(t, k)}
          <input
            name={k}
            value={v[k]}
            inputMode={k === 'code' || k === 'title' ? 'text' : 'decimal'}
            onInput={(e) => setV({ ...v, [k]: (e.target as HTMLInputElement).value })}
          />
        </label>
      ))}
      <label>
        {fieldLabel(t, 'startMode')}
        <select
          name="startMode"
          value={mode}
          onChange={(e) => setMode((e.target as HTMLSelectElement).value as typeof mode)}
        >
          <option value="immediate">{t('st-mode-immediate')}</option>
          <option value="on_request">{t('st-mode-on_request')}</option>
        </select>
      </label>
      <button type="submit" class="primary">
        {t('st-create')}
      </button>
    </form>
  )
}
