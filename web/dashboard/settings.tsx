import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { MeDto } from '../../src/dashboard/dashboard.model'
import type {
  FieldTargetDto,
  InviteDto,
  PlanFieldDto,
  RuleFieldDto,
  SettingsDto,
  SettingsIssueDto,
  TariffFieldDto,
  WeekdayDto,
} from '../../src/dashboard/settings.model'
import { type Api, ApiError } from './api'
import { formatAt, pluralForm } from './format'
import type { Lang, T } from './i18n'

/**
 * The settings pages (owner and admins; the tab is not shown to experts and the API refuses them): the same edits as
 * the chat's /settings, /staff and /invite (every field of a tariff and a plan, new plans and deletes, anti-flood,
 * days off), made by the same services on the server. Every write sends the version
 * the page was drawn from: when someone changed the settings meanwhile, nothing is written, the page says so with the
 * value now, and redraws from the current settings. A refused value names its field.
 */

import { Confirm, Field, fieldLabel, hintOf, NewItem, ZonePicker } from './settings-parts'

type Key = Parameters<T>[0]
const DAYS: WeekdayDto[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
/** A tariff's fields: the main ones shown, the rest under "more" (the slots only for a scheduled tariff). */
const TARIFF_MAIN: TariffFieldDto[] = ['priceStars', 'title', 'appeals', 'windowHours']
const SLOT_FIELDS: TariffFieldDto[] = ['slots', 'slotCapacity']
const TARIFF_MORE: TariffFieldDto[] = [
  'slaBusinessHours',
  'dailyCapacity',
  ...SLOT_FIELDS,
  'breachPolicy',
  'refundPolicy',
  'topUps',
]
type Notice = { kind: 'done' | 'conflict' | 'invalid' | 'error'; text: string }

export function Settings(props: { api: Api; me: MeDto; t: T; lang: Lang }) {
  const { api, t, lang } = props
  const [s, setS] = useState<SettingsDto | null>(null)
  const [notice, setNotice] = useState<Notice | null>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    api<SettingsDto>('settings').then(setS, () => setFailed(true))
  }, [])

  /** One write: the outcome in words, the page redrawn from the settings the server answered with. */
  const write = async (path: string, body: Record<string, unknown>): Promise<boolean> => {
    if (!s) return false
    try {
      const r = await api<{ status: 'done'; settings: SettingsDto }>(`settings/${path}`, {
        method: 'POST',
        body: { version: s.version, ...body },
      })
      setS(r.settings)
      setNotice({ kind: 'done', text: t('st-saved') })
      return true
    } catch (e) {
      if (!(e instanceof ApiError)) {
        setNotice({ kind: 'error', text: t('error-generic') })
        return false
      }
      const b = e.body as {
        error?: string
        count?: number
        settings?: SettingsDto
        current?: string
        issues?: SettingsIssueDto[]
      }
      if (e.status === 409 && b.error === 'refused' && b.settings) {
        setS(b.settings)
        const n = b.count ?? 0
        setNotice({ kind: 'invalid', text: t(`st-plan-live-${pluralForm(n, lang)}` as Key, { n }) })
      } else if (e.status === 409 && b.settings) {
        setS(b.settings)
        setNotice({
          kind: 'conflict',
          text: b.current !== undefined ? t('st-conflict-value', { value: b.current }) : t('st-conflict'),
        })
      } else if (b.issues?.length)
        setNotice({
          kind: 'invalid',
          text: b.issues
            .map((i) => t('st-invalid', { field: fieldLabel(t, i.field), reason: i.message }))
            .join(' '),
        })
      else setNotice({ kind: 'error', text: t(e.status === 404 ? 'st-gone' : 'error-generic') })
      return false
    }
  }

  if (failed) return <p class="error">{t('error-generic')}</p>
  if (!s) return <p class="hint">{t('loading')}</p>
  const field = (target: FieldTargetDto, value: string) => write('field', { target, value })
  const title = (x: { title: Partial<Record<Lang, string>> }) =>
    x.title[lang] ?? Object.values(x.title)[0] ?? ''

  return (
    <div class="page" data-page="settings" data-version={s.version}>
      {notice && (
        <p class={`notice notice-${notice.kind}`} data-settings-notice={notice.kind}>
          {notice.text}
        </p>
      )}
      <section class="card" data-section="tariffs">
        <h2>{t('st-tariffs')}</h2>
        {s.tariffs.map((x) => {
          const edit = (f: TariffFieldDto) => (
            <Field
              key={f}
              t={t}
              name={`tariff:${x.code}:${f}`}
              label={fieldLabel(t, f)}
              hint={hintOf(t, f)}
              value={x.fields[f]}
              onSave={(v) => field({ kind: 'tariff', code: x.code, field: f }, v)}
            />
          )
          return (
            <SaleItem
              key={`${x.code}:${s.version}`}
              kind="tariff"
              item={x}
              title={title(x)}
              t={t}
              write={write}
            >
              {TARIFF_MAIN.map(edit)}
              <p class="hint">{t('st-start-line', { mode: t(`st-mode-${x.startMode}` as Key) })}</p>
              <details class="more" data-more={x.code}>
                <summary>{t('st-more')}</summary>
                {(x.startMode === 'scheduled'
                  ? TARIFF_MORE
                  : TARIFF_MORE.filter((f) => !SLOT_FIELDS.includes(f))
                ).map(edit)}
              </details>
            </SaleItem>
          )
        })}
        <NewItem kind="tariff" t={t} onCreate={(b) => write('tariffs', b)} />
      </section>
      <section class="card" data-section="plans">
        <h2>{t('st-plans')}</h2>
        {s.plans.length === 0 && <p class="hint">{t('st-no-plans')}</p>}
        {s.plans.map((x) => (
          <SaleItem key={`${x.code}:${s.version}`} kind="plan" item={x} title={title(x)} t={t} write={write}>
            {(Object.keys(x.fields) as PlanFieldDto[]).map((f) => (
              <Field
                key={f}
                t={t}
                name={`plan:${x.code}:${f}`}
                label={fieldLabel(t, f)}
                hint={hintOf(t, f === 'refundPolicy' ? 'planRefundPolicy' : f)}
                value={x.fields[f]}
                onSave={(v) => field({ kind: 'plan', code: x.code, field: f }, v)}
              />
            ))}
          </SaleItem>
        ))}
        <NewItem kind="plan" t={t} onCreate={(b) => write('plans', b)} />
      </section>
      <section class="card" data-section="hours" key={`hours:${s.version}`}>
        <h2>{t('st-hours')}</h2>
        <ZonePicker t={t} s={s} onSave={(zone) => write('zone', { zone })} />
        <p class="hint">{t('st-hours-hint')}</p>
        {DAYS.map((d) => (
          <Field
            key={d}
            t={t}
            name={`weekday:${d}`}
            label={t(`day-${d}` as Key)}
            value={(s.schedule.weekly[d] ?? []).join(', ') || '-'}
            onSave={(v) => field({ kind: 'weekday', day: d }, v)}
          />
        ))}
        <h3>{t('f-holidays')}</h3>
        <ul class="list">
          {s.schedule.holidays.map((d) => (
            <li key={d} data-holiday={d}>
              {d}{' '}
              <button type="button" class="link" onClick={() => write('holidays/remove', { date: d })}>
                {t('st-remove')}
              </button>
            </li>
          ))}
        </ul>
        <Field
          t={t}
          name="holiday"
          label={t('st-add-holiday')}
          value=""
          onSave={(v) => field({ kind: 'holiday' }, v)}
        />
        <h3>{t('f-extraWorkingDays')}</h3>
        <ul class="list">
          {Object.entries(s.schedule.extraWorkingDays).map(([d, h]) => (
            <li key={d} data-extra={d}>
              {d} {h.join(', ')}{' '}
              <button type="button" class="link" onClick={() => write('extra/remove', { date: d })}>
                {t('st-remove')}
              </button>
            </li>
          ))}
        </ul>
        <Field
          t={t}
          name="extra"
          label={t('st-add-extra')}
          value=""
          onSave={(v) => field({ kind: 'extra' }, v)}
        />
      </section>
      <section class="card" data-section="antiflood" key={`antiflood:${s.version}`}>
        <h2>{t('st-antiflood')}</h2>
        <Field
          t={t}
          name="antiFlood"
          label={fieldLabel(t, 'antiFlood')}
          hint={hintOf(t, 'antiFlood')}
          value={s.antiFlood}
          onSave={(v) => field({ kind: 'antiFlood' }, v)}
        />
      </section>
      <section class="card" data-section="rules" key={`rules:${s.version}`}>
        <h2>{t('st-rules')}</h2>
        {(Object.keys(s.rules) as RuleFieldDto[]).map((f) => (
          <Field
            key={f}
            t={t}
            name={`rule:${f}`}
            label={fieldLabel(t, f)}
            hint={hintOf(t, f)}
            value={s.rules[f]}
            onSave={(v) => field({ kind: 'rule', field: f }, v)}
          />
        ))}
      </section>
      <section class="card" data-section="texts" key={`texts:${s.version}`}>
        <h2>{t('st-texts')}</h2>
        {(['terms', 'privacy'] as const).flatMap((which) =>
          (['ru', 'en'] as const).map((l) => (
            <Field
              key={`${which}:${l}`}
              t={t}
              multiline
              name={`text:${which}:${l}`}
              label={t(`st-text-${which}` as Key, { lang: l.toUpperCase() })}
              value={s.texts[which][l] ?? ''}
              onSave={(v) => field({ kind: 'text', which, lang: l }, v)}
            />
          )),
        )}
      </section>
      <Staff api={api} t={t} lang={lang} s={s} zone={props.me.desk.zone} write={write} />
    </div>
  )
}

/** A tariff or a plan: its title and whether it is on sale, its fields (the children), pause or resume, delete. */
function SaleItem(props: {
  kind: 'tariff' | 'plan'
  item: { code: string; paused: boolean }
  title: string
  t: T
  write: (path: string, body: Record<string, unknown>) => Promise<boolean>
  children: ComponentChildren
}) {
  const { kind, t, write } = props
  const { code, paused } = props.item
  const path = `${kind}s/${code}`
  return (
    <div
      class="setting-item"
      data-tariff={kind === 'tariff' ? code : undefined}
      data-plan={kind === 'plan' ? code : undefined}
    >
      <div class="item-head">
        <b>{props.title}</b>{' '}
        <span class={`badge ${paused ? 'state-revoked' : 'state-active'}`}>
          {t(paused ? 'st-paused' : 'st-on-sale')}
        </span>
      </div>
      {props.children}
      <div class="row">
        <button type="button" data-action="pause" onClick={() => write(`${path}/pause`, { paused: !paused })}>
          {t(paused ? 'st-resume' : 'st-pause')}
        </button>
        <Confirm t={t} label={t('st-delete')} onYes={() => write(`${path}/delete`, {})} />
      </div>
    </div>
  )
}

function Staff(props: {
  api: Api
  t: T
  lang: Lang
  s: SettingsDto
  zone: string
  write: (path: string, body: Record<string, unknown>) => Promise<boolean>
}) {
  const { api, t, s } = props
  const [role, setRole] = useState<'expert' | 'admin'>('expert')
  const [uses, setUses] = useState('1')
  const [invite, setInvite] = useState<InviteDto | null>(null)
  const [error, setError] = useState<string | null>(null)
  const create = async () => {
    setError(null)
    try {
      setInvite(
        await api<InviteDto>('settings/invites', { method: 'POST', body: { role, uses: Number(uses) } }),
      )
    } catch (e) {
      const issues = e instanceof ApiError ? (e.body as { issues?: SettingsIssueDto[] }).issues : undefined
      setError(
        issues?.length
          ? issues.map((i) => t('st-invalid', { field: fieldLabel(t, i.field), reason: i.message })).join(' ')
          : t('error-generic'),
      )
    }
  }
  return (
    <section class="card" data-section="staff">
      <h2>{t('st-staff')}</h2>
      <p class="hint">{t('hint-daysOff')}</p>
      <ul class="items">
        {s.staff.map((x) => (
          <li key={x.id} class="item" data-staff={x.id} data-role={x.role}>
            <b>{x.name || t('who-other', { id: x.id })}</b> · {t(`role-${x.role}` as Key)}
            <Field
              key={`${x.id}:${s.version}`}
              t={t}
              name={`daysOff:${x.id}`}
              label={fieldLabel(t, 'daysOff')}
              value={x.daysOff}
              onSave={(v) => props.write('field', { target: { kind: 'daysOff', userId: x.id }, value: v })}
            />
            {s.owner && x.role !== 'owner' && (
              <div class="row">
                <button
                  type="button"
                  data-action={x.role === 'admin' ? 'make-expert' : 'make-admin'}
                  onClick={() =>
                    props.write(`staff/${x.id}`, { action: x.role === 'admin' ? 'expert' : 'admin' })
                  }
                >
                  {t(x.role === 'admin' ? 'st-make-expert' : 'st-make-admin')}
                </button>
                <Confirm
                  t={t}
                  label={t('st-remove')}
                  onYes={() => props.write(`staff/${x.id}`, { action: 'remove' })}
                />
              </div>
            )}
          </li>
        ))}
      </ul>
      <h3>{t('st-invite')}</h3>
      <div class="row" data-form="invite">
        <select
          name="role"
          value={role}
          onChange={(e) => setRole((e.target as HTMLSelectElement).value as typeof role)}
        >
          <option value="expert">{t('role-expert')}</option>
          {s.owner && <option value="admin">{t('role-admin')}</option>}
        </select>
        <label>
          {t('f-uses')}
          <input
            name="uses"
            inputMode="numeric"
            value={uses}
            onInput={(e) => setUses((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="button" class="primary" data-action="invite" onClick={create}>
          {t('st-invite-create')}
        </button>
      </div>
      {error && <p class="notice notice-invalid">{error}</p>}
      {invite && (
        <p class="notice" data-invite>
          {t('st-invite-done', {
            uses: invite.uses,
            until: formatAt(invite.expiresAt, props.zone, props.lang),
          })}{' '}
          <a href={invite.link} target="_blank" rel="noreferrer" data-invite-link>
            {invite.link}
          </a>
        </p>
      )}
    </section>
  )
}
