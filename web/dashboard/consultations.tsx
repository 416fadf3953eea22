import { useEffect, useState } from 'preact/hooks'
import type {
  ConsultationDetailDto,
  ConsultationItemDto,
  MeDto,
  TimelineEventDto,
} from '../../src/dashboard/dashboard.model'
import { type Api, query } from './api'
import { clientName, formatAt, formatBusinessTime, staffName } from './format'
import { type Lang, reasonText, type T } from './i18n'
import { PaymentRow } from './payments'

interface Filters {
  q: string
  state: string
  expert: string
  tariff: string
  from: string
  to: string
}

const EMPTY: Filters = { q: '', state: '', expert: '', tariff: '', from: '', to: '' }

/** « and » mark the words the search matched (ts_headline); shown highlighted, never as HTML. */
function Highlighted(props: { text: string }) {
  const parts = props.text.split(/(«[^»]*»)/)
  return (
    <span class="match">
      {parts.map((s, i) => (s.startsWith('«') ? <mark key={i}>{s.slice(1, -1)}</mark> : s))}
    </span>
  )
}

export function Consultations(props: {
  api: Api
  me: MeDto
  t: T
  lang: Lang
  onOpen: (id: number) => void
}) {
  const { api, me, t, lang } = props
  const [draft, setDraft] = useState<Filters>(EMPTY)
  const [filters, setFilters] = useState<Filters>(EMPTY)
  const [rows, setRows] = useState<ConsultationItemDto[] | null>(null)
  const [more, setMore] = useState(false)
  const [error, setError] = useState(false)
  const zone = me.desk.zone

  const load = (before?: number) => {
    setError(false)
    api<ConsultationItemDto[]>(`consultations${query({ ...filters, before })}`).then(
      (page) => {
        setRows((prev) => (before && prev ? [...prev, ...page] : page))
        setMore(page.length >= 50)
      },
      () => setError(true),
    )
  }
  useEffect(() => load(), [filters])

  const set = (k: keyof Filters) => (e: Event) =>
    setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value })
  const experts = me.staff

  return (
    <div class="page" data-page="consultations">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          setFilters(draft)
        }}
      >
        <input type="search" name="q" value={draft.q} onInput={set('q')} placeholder={t('search')} />
        <div class="row">
          <label>
            {t('filter-state')}
            <select name="state" value={draft.state} onChange={set('state')}>
              <option value="">{t('any')}</option>
              {(['waiting', 'active', 'closed', 'revoked'] as const).map((s) => (
                <option key={s} value={s}>
                  {t(`state-${s}`)}
                </option>
              ))}
            </select>
          </label>
          {me.role === 'admin' && (
            <label>
              {t('filter-expert')}
              <select name="expert" value={draft.expert} onChange={set('expert')}>
                <option value="">{t('any')}</option>
                {experts.map((s) => (
                  <option key={s.id} value={String(s.id)}>
                    {staffName(me, t, s.id)}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            {t('filter-tariff')}
            <select name="tariff" value={draft.tariff} onChange={set('tariff')}>
              <option value="">{t('any')}</option>
              {me.tariffs.map((x) => (
                <option key={x.code} value={x.code}>
                  {x.title}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div class="row">
          <label>
            {t('filter-from')}
            <input type="date" name="from" value={draft.from} onInput={set('from')} />
          </label>
          <label>
            {t('filter-to')}
            <input type="date" name="to" value={draft.to} onInput={set('to')} />
          </label>
          <button type="submit" class="primary">
            {t('search-button')}
          </button>
        </div>
      </form>
      {error && <p class="error">{t('error-generic')}</p>}
      {rows === null ? (
        <p class="hint">{t('loading')}</p>
      ) : rows.length === 0 ? (
        <p class="hint" data-empty="consultations">
          {t('nothing-found')}
        </p>
      ) : (
        <ul class="items">
          {rows.map((c) => (
            <li key={c.id} class="item" data-consultation={c.id}>
              <button type="button" class="link" onClick={() => props.onOpen(c.id)}>
                <div class="item-head">
                  <b>#{c.id}</b> {clientName(c.client)}
                  <span class={`badge state-${c.state}`}>{t(`state-${c.state}` as Parameters<T>[0])}</span>
                </div>
                <div class="hint">
                  {c.title} · {formatAt(c.createdAt, zone, lang)} ·{' '}
                  {t('questions-used', { used: c.appealsUsed, total: c.appealsTotal })}
                </div>
                {c.match && <Highlighted text={c.match} />}
              </button>
            </li>
          ))}
        </ul>
      )}
      {more && rows && (
        <button type="button" onClick={() => load(rows[rows.length - 1]!.id)}>
          {t('more')}
        </button>
      )}
    </div>
  )
}

function eventText(e: TimelineEventDto, me: MeDto, t: T, lang: Lang): string {
  const zone = me.desk.zone
  switch (e.type) {
    case 'payment':
      return t('ev-payment', {
        id: e.paymentId,
        amount: e.amount,
        kind: t(`kind-${e.kind}` as Parameters<T>[0]),
      })
    case 'refund':
      return t('ev-refund', { id: e.paymentId, amount: e.amount })
    case 'question':
      return t('ev-question', { n: e.number, due: formatAt(e.dueAt, zone, lang) })
    case 'answer':
      return `${t('ev-answer', { n: e.number, who: staffName(me, t, e.by) })}${
        e.inTime === null ? '' : `, ${t(e.inTime ? 'ev-answer-in-time' : 'ev-answer-late')}`
      }`
    case 'breach':
      return t('ev-breach', { n: e.number })
    case 'note':
      return `${t('ev-note')}: ${e.text ?? e.key ?? ''}`
    case 'refusal':
      return t('ev-refusal', { reason: reasonText(lang, e.reason) })
    case 'draft':
      return t('ev-draft', { id: e.draftId, state: e.state, who: staffName(me, t, e.by) })
    default:
      return t(`ev-${e.type}` as Parameters<T>[0])
  }
}

export function ConsultationPage(props: {
  api: Api
  me: MeDto
  t: T
  lang: Lang
  id: number
  onBack: () => void
}) {
  const { api, me, t, lang } = props
  const [d, setD] = useState<ConsultationDetailDto | null>(null)
  const [error, setError] = useState(false)
  const zone = me.desk.zone
  const reload = () =>
    api<ConsultationDetailDto>(`consultations/${props.id}`).then(setD, () => setError(true))
  useEffect(() => {
    reload()
  }, [props.id])

  return (
    <div class="page" data-page="consultation">
      <button type="button" class="link back" onClick={props.onBack}>
        {t('back')}
      </button>
      {error && <p class="error">{t('error-generic')}</p>}
      {!d ? (
        !error && <p class="hint">{t('loading')}</p>
      ) : (
        <>
          <section class="card" data-section="card">
            <h2>
              {t('card', { id: d.card.id })}{' '}
              <span class={`badge state-${d.card.state}`}>
                {t(`state-${d.card.state}` as Parameters<T>[0])}
              </span>
            </h2>
            <dl>
              <dt>{t('client')}</dt>
              <dd>
                {clientName(d.card.client)} (id {d.card.client.id})
              </dd>
              <dt>{t('tariff')}</dt>
              <dd>
                {d.card.title} · {d.card.priceStars} ⭐ ·{' '}
                {t('questions-used', { used: d.card.appealsUsed, total: d.card.appealsTotal })}
              </dd>
              <dt>{t('window')}</dt>
              <dd>
                {formatAt(d.card.startsAt, zone, lang)} — {formatAt(d.card.accessUntil, zone, lang)} ·{' '}
                <span data-sla>
                  {t('sla-line', { time: formatBusinessTime(d.card.slaMinutes, lang, t) })}
                </span>
              </dd>
              {d.card.topicLink !== null && (
                <>
                  <dt>{t('topic')}</dt>
                  <dd>
                    <a href={d.card.topicLink} target="_blank" rel="noreferrer" data-topic-link>
                      {t('topic-open')}
                    </a>
                  </dd>
                </>
              )}
            </dl>
          </section>
          {d.payments.length > 0 && (
            <section class="card" data-section="payments">
              <h2>{t('tab-payments')}</h2>
              <ul class="items">
                {d.payments.map((p) => (
                  <PaymentRow key={p.id} api={api} me={me} t={t} lang={lang} payment={p} onChange={reload} />
                ))}
              </ul>
            </section>
          )}
          <section class="card" data-section="timeline">
            <h2>{t('timeline')}</h2>
            <ol class="timeline">
              {d.timeline.map((e, i) => (
                <li key={i} data-event={e.type}>
                  <span class="when">{formatAt(e.at, zone, lang)}</span> {eventText(e, me, t, lang)}
                </li>
              ))}
            </ol>
          </section>
          <section class="card" data-section="transcript">
            <h2>{t('transcript')}</h2>
            <pre class="transcript">{d.transcript}</pre>
          </section>
        </>
      )}
    </div>
  )
}
