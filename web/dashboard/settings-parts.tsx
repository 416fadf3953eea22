import { useState } from 'preact/hooks'
import type { SettingsDto } from '../../src/dashboard/settings.model'
import type { T } from './i18n'

/**
 * The pieces of the settings page (web/dashboard/settings.tsx): a field with its Save, a confirmation, the zone
 * picker, the form of a new tariff or plan.
 */

type Key = Parameters<T>[0]

/** A field's name in the page's words (the API names fields as the desk document does: priceStars, holiday...). */
export function fieldLabel(t: T, field: string): string {
  const key = `f-${field}` as Key
  const s = t(key)
  return s === `f-${field}` ? field : s
}

/** How a field's value is written, where the label alone does not say it (the chat's question, in the page's words). */
export function hintOf(t: T, field: string): string | undefined {
  const key = `hint-${field}` as Key
  const s = t(key)
  return s === key ? undefined : s
}

/** A labelled input with its own Save: what the chat asks for by typing, the same words read the same way. */
export function Field(props: {
  t: T
  name: string
  label: string
  hint?: string | undefined
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
          {props.hint && <span class="field-hint">{props.hint}</span>}
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

/** The fields of a new tariff or plan (the chat's steps, src/settings/create.ts); a tariff also picks its start. */
const STEPS = {
  tariff: ['code', 'title', 'priceStars', 'windowHours', 'appeals', 'slaBusinessHours'],
  plan: ['code', 'title', 'priceStars', 'questions', 'slaBusinessHours'],
} as const

export function NewItem(props: {
  kind: 'tariff' | 'plan'
  t: T
  onCreate: (b: Record<string, unknown>) => Promise<boolean>
}) {
  const { t, kind } = props
  const steps: readonly string[] = STEPS[kind]
  const empty = () => Object.fromEntries(steps.map((k) => [k, ''])) as Record<string, string>
  const [open, setOpen] = useState(false)
  const [v, setV] = useState(empty)
  const [mode, setMode] = useState<'immediate' | 'on_request'>('immediate')
  if (!open)
    return (
      <button type="button" data-action={`new-${kind}`} onClick={() => setOpen(true)}>
        {t(kind === 'tariff' ? 'st-new-tariff' : 'st-new-plan')}
      </button>
    )
  const num = (x: string) => (x.trim() === '' ? null : Number(x.replace(',', '.')))
  return (
    <form
      class="new-tariff"
      data-form={`new-${kind}`}
      onSubmit={async (e) => {
        e.preventDefault()
        const body: Record<string, unknown> = Object.fromEntries(
          steps.map((k) => [k, k === 'code' || k === 'title' ? v[k] : num(v[k] ?? '')]),
        )
        if (kind === 'tariff') body.startMode = mode
        if (await props.onCreate(body)) {
          setV(empty())
          setOpen(false)
        }
      }}
    >
      {steps.map((k) => (
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
      {kind === 'tariff' ? (
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
      ) : (
        <p class="hint">{t('st-plan-terms')}</p>
      )}
      <button type="submit" class="primary">
        {t('st-create')}
      </button>
    </form>
  )
}
