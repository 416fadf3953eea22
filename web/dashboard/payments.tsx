import { useEffect, useState } from 'preact/hooks'
import type {
  ExportKind,
  ExportLinkDto,
  MeDto,
  PaymentDto,
  RefundResultDto,
} from '../../src/dashboard/dashboard.model'
import { type Api, ApiError, query } from './api'
import { clientName, formatAt, staffName } from './format'
import type { Lang, T } from './i18n'
import { downloadFile, type Launch } from './telegram'

/**
 * One payment, with the refund for admins: the button opens a confirmation that names the payment, the amount and
 * the client; only "Yes, refund" sends the request, echoing the charge id it showed (the server refunds nothing if
 * the payment is not that one). The answer is shown as the bot would word it, and the row is read again.
 */
export function PaymentRow(props: {
  api: Api
  me: MeDto
  t: T
  lang: Lang
  payment: PaymentDto
  onChange: () => void
}) {
  const { api, me, t, lang } = props
  const p = props.payment
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<string | null>(null)
  const zone = me.desk.zone

  const outcome = (id: number, status: string, description?: string) =>
    status === 'failed'
      ? t('refund-failed', { id, description: description ?? '' })
      : t(`refund-${status}` as Parameters<T>[0], { id })

  // With `withTopUps` the consultation's listed top-ups are refunded with it (each its own refund, once).
  const refund = async (withTopUps: boolean) => {
    setBusy(true)
    try {
      const r = await api<RefundResultDto>(`payments/${p.id}/refund`, {
        method: 'POST',
        body: {
          confirmCharge: p.charge,
          ...(withTopUps ? { topUps: p.topUps.map((x) => x.paymentId) } : {}),
        },
      })
      setMessage(
        [
          r.status === 'failed' ? outcome(p.id, r.status, r.description) : outcome(p.id, r.status),
          ...(r.topUps ?? []).map((x) => outcome(x.paymentId, x.status, x.description)),
        ].join(' '),
      )
      props.onChange()
    } catch (e) {
      setMessage(e instanceof ApiError && e.status === 409 ? t('refund-mismatch') : t('error-generic'))
    } finally {
      setBusy(false)
      setConfirming(false)
    }
  }

  return (
    <li class="item" data-payment={p.id} data-refunded={p.refundedAt ? 'yes' : 'no'}>
      <div class="item-head">
        <b>{t('payment-no', { id: p.id })}</b> {p.amount} ⭐ · {clientName(p.client)}
        {p.refundedAt ? (
          <span class="badge state-revoked" data-status="refunded">
            {t('status-refunded', { at: formatAt(p.refundedAt, zone, lang) })}
          </span>
        ) : p.refundInProgress ? (
          <span class="badge">{t('status-refunding')}</span>
        ) : null}
      </div>
      <div class="hint">
        {formatAt(p.createdAt, zone, lang)} · {t(`kind-${p.kind}` as Parameters<T>[0])}
        {p.title ? ` · ${p.title}` : ''}
        {p.topUp && p.consultationId
          ? ` · ${t('topup-of', { id: p.consultationId, what: topUpWhat(t, lang, p.topUp) })}`
          : p.consultationId
            ? ` · ${t('consultation-no', { id: p.consultationId })}`
            : ''}
        {p.refundedBy ? ` · ${t('refunded-by', { who: staffName(me, t, p.refundedBy) })}` : ''}
      </div>
      {me.role === 'admin' && !p.refundedAt && !confirming && (
        <button type="button" class="danger" data-action="refund" onClick={() => setConfirming(true)}>
          {t('refund')}
        </button>
      )}
      {confirming && (
        <div class="confirm" role="alertdialog" data-confirm={p.id}>
          <p>{t('refund-confirm', { id: p.id, amount: p.amount, client: clientName(p.client) })}</p>
          {p.topUps.length > 0 ? (
            <>
              <p>{t('topups-title')}</p>
              <ul data-topups>
                {p.topUps.map((x) => (
                  <li key={x.paymentId} data-topup={x.paymentId}>
                    {t('topup-line', { id: x.paymentId, amount: x.amount, what: topUpWhat(t, lang, x) })}
                  </li>
                ))}
              </ul>
              <p class="hint">{t('topup-rule')}</p>
              <button
                type="button"
                class="danger"
                data-action="refund-only"
                disabled={busy}
                onClick={() => refund(false)}
              >
                {t('refund-only', { amount: p.amount })}
              </button>
              <button
                type="button"
                class="danger"
                data-action="refund-with-topups"
                disabled={busy}
                onClick={() => refund(true)}
              >
                {t('refund-with-topups', {
                  n: p.topUps.length,
                  amount: p.amount + p.topUps.reduce((n, x) => n + x.amount, 0),
                })}
              </button>
            </>
          ) : (
            <button
              type="button"
              class="danger"
              data-action="refund-yes"
              disabled={busy}
              onClick={() => refund(false)}
            >
              {t('refund-yes')}
            </button>
          )}
          <button
            type="button"
            data-action="refund-cancel"
            disabled={busy}
            onClick={() => setConfirming(false)}
          >
            {t('cancel')}
          </button>
        </div>
      )}
      {message && (
        <p class="notice" data-refund-message>
          {message}
        </p>
      )}
    </li>
  )
}

/** "2 more questions", "3 more h": what a top-up bought. */
function topUpWhat(t: T, lang: Lang, x: { questions: number; hours: number }): string {
  if (x.questions === 0) return t('topup-hours', { n: x.hours })
  const form = new Intl.PluralRules(lang).select(x.questions)
  const known = form === 'one' || form === 'few' || form === 'many' ? form : 'other'
  return t(`topup-questions-${known}`, {
    n: x.questions,
  })
}

const EXPORT_DAYS = [7, 30, 90, 365] as const

function Export(props: { api: Api; t: T; launch: Launch }) {
  const { api, t } = props
  const [days, setDays] = useState<number>(30)
  const [message, setMessage] = useState<string | null>(null)
  const start = async (kind: ExportKind) => {
    try {
      const link = await api<ExportLinkDto>('export', { method: 'POST', body: { kind, days } })
      await downloadFile(props.launch, link.url, link.filename)
      setMessage(t('export-started', { file: link.filename }))
    } catch {
      setMessage(t('error-generic'))
    }
  }
  return (
    <section class="card" data-section="export">
      <h2>{t('export-title')}</h2>
      <div class="row">
        <select
          name="export-days"
          value={String(days)}
          onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}
        >
          {EXPORT_DAYS.map((n) => (
            <option key={n} value={String(n)}>
              {t('export-range', { n })}
            </option>
          ))}
        </select>
      </div>
      <div class="row">
        {(['payments', 'consultations', 'questions'] as const).map((k) => (
          <button type="button" key={k} data-export={k} onClick={() => start(k)}>
            {t(`export-${k}`)}
          </button>
        ))}
      </div>
      {message && <p class="hint">{message}</p>}
    </section>
  )
}

export function Payments(props: { api: Api; me: MeDto; t: T; lang: Lang; launch: Launch }) {
  const { api, me, t, lang } = props
  const [status, setStatus] = useState<'' | 'refunded' | 'not-refunded'>('')
  const [rows, setRows] = useState<PaymentDto[] | null>(null)
  const [error, setError] = useState(false)
  const load = () =>
    api<PaymentDto[]>(`payments${query({ status })}`).then(
      (r) => {
        setError(false)
        setRows(r)
      },
      () => setError(true),
    )
  useEffect(() => {
    load()
  }, [status])

  return (
    <div class="page" data-page="payments">
      <Export api={api} t={t} launch={props.launch} />
      <div class="segmented">
        {(
          [
            ['', 'payments-all'],
            ['not-refunded', 'payments-not-refunded'],
            ['refunded', 'payments-refunded'],
          ] as const
        ).map(([v, key]) => (
          <button type="button" key={v} class={status === v ? 'on' : ''} onClick={() => setStatus(v)}>
            {t(key)}
          </button>
        ))}
      </div>
      {error && <p class="error">{t('error-generic')}</p>}
      {rows === null ? (
        <p class="hint">{t('loading')}</p>
      ) : rows.length === 0 ? (
        <p class="hint">{t('nothing-found')}</p>
      ) : (
        <ul class="items">
          {rows.map((p) => (
            <PaymentRow key={p.id} api={api} me={me} t={t} lang={lang} payment={p} onChange={load} />
          ))}
        </ul>
      )}
    </div>
  )
}
