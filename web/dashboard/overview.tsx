import type { ChartConfiguration } from 'chart.js'
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { MeDto, OverviewDto } from '../../src/dashboard/dashboard.model'
import type { Api } from './api'
import { axes, ChartBox, palette } from './chart'
import { formatDay, formatMinutes, formatMoney, formatNumber, staffName } from './format'
import { type Lang, reasonText, type T } from './i18n'

const RANGES = [7, 30, 90] as const

function hitRate(a: { answeredInTime: number; answeredLate: number; openBreached: number }): number | null {
  const decided = a.answeredInTime + a.answeredLate + a.openBreached
  return decided ? (100 * a.answeredInTime) / decided : null
}

function Kpi(props: { label: string; value: string; name: string }) {
  return (
    <div class="kpi" data-kpi={props.name}>
      <div class="kpi-value">{props.value}</div>
      <div class="kpi-label">{props.label}</div>
    </div>
  )
}

function Section(props: { title: string; name: string; children: preact.ComponentChildren; note?: string }) {
  return (
    <section class="card" data-section={props.name}>
      <h2>{props.title}</h2>
      {props.note && <p class="hint">{props.note}</p>}
      {props.children}
    </section>
  )
}

/** The viewer's open questions by due time (the API's openNow, as /mine lists them), first on the page. */
function OpenNow(props: { data: OverviewDto['openNow']; me: MeDto; t: T; lang: Lang }) {
  const { data, me, t, lang } = props
  return (
    <Section title={t('open-now')} name="open-now">
      {data.items.length === 0 && <p class="hint">{t('open-none')}</p>}
      <ul class="open-now">
        {data.items.map((i) => {
          const label = t('open-question', { consultation: i.consultationId, n: i.number })
          return (
            <li key={`${i.consultationId}:${i.number}`} data-consultation={i.consultationId}>
              {i.topicLink ? (
                <a href={i.topicLink} target="_blank" rel="noreferrer">
                  {label}
                </a>
              ) : (
                label
              )}{' '}
              ({i.title}):{' '}
              {i.overdue
                ? t('open-overdue', { over: formatMinutes(i.minutesOver, lang) })
                : t('open-left', { left: formatMinutes(i.minutesLeft, lang) })}
              {me.role === 'admin' && i.owner ? ` · ${i.owner.name}` : ''}
            </li>
          )
        })}
      </ul>
      {data.more > 0 && <p class="hint">{t('open-more', { n: data.more })}</p>}
    </Section>
  )
}

export function Overview(props: { api: Api; me: MeDto; t: T; lang: Lang; themeKey: number }) {
  const { api, me, t, lang } = props
  const [days, setDays] = useState<number>(30)
  const [data, setData] = useState<OverviewDto | null>(null)
  const [error, setError] = useState(false)

  useEffect(() => {
    setError(false)
    api<OverviewDto>(`overview?days=${days}`).then(setData, () => setError(true))
  }, [days])

  const charts = useMemo(() => (data ? buildCharts(data, me, t, lang) : null), [data, props.themeKey])

  return (
    <div class="page" data-page="overview">
      <div class="segmented" role="tablist">
        {RANGES.map((n) => (
          <button
            type="button"
            key={n}
            class={n === days ? 'on' : ''}
            onClick={() => setDays(n)}
            data-days={n}
          >
            {t('days', { n })}
          </button>
        ))}
      </div>
      {error && <p class="error">{t('error-generic')}</p>}
      {!data || !charts ? (
        !error && <p class="hint">{t('loading')}</p>
      ) : (
        <>
          <OpenNow data={data.openNow} me={me} t={t} lang={lang} />
          <div class="kpis">
            {data.revenue && (
              <>
                <Kpi
                  name="paid"
                  label={t('kpi-paid')}
                  value={`${formatNumber(data.revenue.totals.paidStars, lang)} ⭐`}
                />
                <Kpi
                  name="refunded"
                  label={t('kpi-refunded')}
                  value={`${formatNumber(data.revenue.totals.refundedStars, lang)} ⭐`}
                />
                <Kpi
                  name="net"
                  label={t('kpi-net')}
                  value={`${formatNumber(data.revenue.totals.netStars, lang)} ⭐`}
                />
              </>
            )}
            <Kpi
              name="questions"
              label={t('kpi-questions')}
              value={formatNumber(data.appeals.totals.accepted, lang)}
            />
            <Kpi
              name="sla"
              label={t('kpi-sla')}
              value={(() => {
                const r = hitRate(data.appeals.totals)
                return r === null ? '—' : `${formatNumber(r, lang, 1)}%`
              })()}
            />
            {data.role === 'admin' && (
              <Kpi name="open" label={t('kpi-open')} value={formatNumber(data.appeals.totals.open, lang)} />
            )}
          </div>
          {charts.revenue && (
            <Section title={t('chart-revenue')} name="revenue">
              <ChartBox name="revenue" label={t('chart-revenue')} config={charts.revenue} />
            </Section>
          )}
          {charts.states && (
            <Section title={t('chart-states')} name="states">
              <ChartBox name="states" label={t('chart-states')} config={charts.states} height={160} />
            </Section>
          )}
          <Section title={t('chart-sla')} name="sla" note={t('chart-sla-note')}>
            <ChartBox name="sla" label={t('chart-sla')} config={charts.sla} />
          </Section>
          <Section title={t('chart-experts')} name="experts" note={t('experts-note')}>
            {data.experts.length ? (
              <>
                <ChartBox
                  name="experts"
                  label={t('chart-experts')}
                  config={charts.experts}
                  height={60 + 28 * data.experts.length}
                />
                <ul class="list">
                  {data.experts.map((e) => (
                    <li key={e.staffId} data-expert={e.staffId}>
                      {t('median-value', {
                        name: staffName(me, t, e.staffId),
                        n: e.answered,
                        time: formatMinutes(e.medianMinutes, lang),
                      })}
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <p class="hint">{t('no-data')}</p>
            )}
          </Section>
          <Section title={t('chart-ratings')} name="ratings">
            {data.ratings?.byExpert.length ? (
              <ul class="list">
                {data.ratings.byExpert.map((r) => (
                  <li key={r.staffId}>
                    {staffName(me, t, r.staffId)}: {formatNumber(r.average, lang, 2)} ({r.count})
                  </li>
                ))}
              </ul>
            ) : (
              <p class="hint empty" data-empty="ratings">
                {t('no-ratings')}
              </p>
            )}
          </Section>
          <Section title={t('chart-drafts')} name="drafts">
            <ChartBox name="drafts" label={t('chart-drafts')} config={charts.drafts} />
            {data.role === 'admin' && <Budget data={data} me={me} t={t} lang={lang} />}
          </Section>
          {charts.refusals && (
            <Section title={t('chart-refusals')} name="refusals">
              {charts.refusalCount ? (
                <ChartBox
                  name="refusals"
                  label={t('chart-refusals')}
                  config={charts.refusals}
                  height={60 + 40 * charts.refusalCount}
                />
              ) : (
                <p class="hint">{t('no-data')}</p>
              )}
            </Section>
          )}
        </>
      )}
    </div>
  )
}

function Budget(props: { data: OverviewDto; me: MeDto; t: T; lang: Lang }) {
  const { t, lang, me } = props
  const b = props.data.drafts.budget
  if (!b) return <p class="hint">{t('no-budget')}</p>
  const fmt = (n: number) =>
    b.unit === 'money' ? formatMoney(n, me.llm, lang) : `${formatNumber(n, lang)} ${t('tokens')}`
  const pct = (n: number) => `${Math.min(100, (100 * n) / Math.max(1, b.limit))}%`
  return (
    <div class="budget" data-budget>
      <div class="budget-title">{t('budget-title')}</div>
      <div class="bar">
        <span class="used" style={{ width: pct(b.used) }} />
        <span class="held" style={{ width: pct(b.held) }} />
      </div>
      <div class="hint">
        {t('budget-line', { used: fmt(b.used), held: fmt(b.held), limit: fmt(b.limit) })}
      </div>
    </div>
  )
}

function buildCharts(d: OverviewDto, me: MeDto, t: T, lang: Lang) {
  const p = palette()
  const dayLabels = (days: { day: string }[]) => days.map((x) => formatDay(x.day, lang))
  const horizontal = { indexAxis: 'y' as const, scales: axes(p), plugins: { legend: { display: false } } }

  const revenue: ChartConfiguration | null = d.revenue && {
    type: 'bar',
    data: {
      labels: dayLabels(d.revenue.byDay),
      datasets: [
        {
          type: 'bar',
          label: t('paid'),
          data: d.revenue.byDay.map((x) => x.paidStars),
          backgroundColor: p.accent,
        },
        {
          type: 'bar',
          label: t('refunded'),
          data: d.revenue.byDay.map((x) => -x.refundedStars),
          backgroundColor: p.bad,
        },
        {
          type: 'line',
          label: t('net'),
          data: d.revenue.byDay.map((x) => x.paidStars - x.refundedStars),
          borderColor: p.text,
          backgroundColor: p.text,
          pointRadius: 2,
        },
      ],
    },
    options: { scales: axes(p, { x: { stacked: true, ticks: { color: p.hint }, grid: { color: p.grid } } }) },
  }

  const states: ChartConfiguration | null = d.consultations && {
    type: 'bar',
    data: {
      labels: d.consultations.map((c) => {
        const key = `state-${c.state}` as Parameters<T>[0]
        return t(key)
      }),
      datasets: [{ label: '', data: d.consultations.map((c) => c.count), backgroundColor: p.accent }],
    },
    options: horizontal,
  }

  const weeks = d.appeals.byWeek
  const sla: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: weeks.map((w) => formatDay(w.week, lang)),
      datasets: [
        {
          type: 'bar',
          label: t('in-time'),
          data: weeks.map((w) => w.answeredInTime),
          backgroundColor: p.good,
          stack: 'q',
        },
        {
          type: 'bar',
          label: t('late'),
          data: weeks.map((w) => w.answeredLate),
          backgroundColor: p.bad,
          stack: 'q',
        },
        {
          type: 'bar',
          label: t('open-questions'),
          data: weeks.map((w) => w.open),
          backgroundColor: p.muted,
          stack: 'q',
        },
        {
          type: 'line',
          label: t('hit-rate'),
          data: weeks.map((w) => hitRate(w)),
          borderColor: p.accent,
          backgroundColor: p.accent,
          yAxisID: 'rate',
          spanGaps: true,
        },
      ],
    },
    options: {
      scales: axes(p, {
        x: { stacked: true, ticks: { color: p.hint }, grid: { color: p.grid } },
        y: {
          stacked: true,
          beginAtZero: true,
          ticks: { color: p.hint, precision: 0 },
          grid: { color: p.grid },
        },
        rate: { position: 'right', min: 0, max: 100, ticks: { color: p.hint }, grid: { display: false } },
      }),
    },
  }

  const experts: ChartConfiguration = {
    type: 'bar',
    data: {
      // The values are written out under the chart (a median of 0, answers outside working hours, has no bar).
      labels: d.experts.map((e) => staffName(me, t, e.staffId)),
      datasets: [
        {
          label: '',
          data: d.experts.map((e) => e.medianMinutes),
          backgroundColor: p.accent,
          minBarLength: 3,
        },
      ],
    },
    options: horizontal,
  }

  const money = d.drafts.budget?.unit !== 'tokens'
  const drafts: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: dayLabels(d.drafts.byDay),
      datasets: [
        {
          type: 'bar',
          label: t('drafts'),
          data: d.drafts.byDay.map((x) => x.drafts),
          backgroundColor: p.accent,
        },
        {
          type: 'line',
          label: money ? `${t('cost')}, ${me.llm.currency}` : t('tokens'),
          data: d.drafts.byDay.map((x) => (money ? x.costMinor / me.llm.minorUnitsPerMajor : x.tokens)),
          borderColor: p.warn,
          backgroundColor: p.warn,
          yAxisID: 'spend',
          pointRadius: 2,
        },
      ],
    },
    options: {
      scales: axes(p, {
        spend: { position: 'right', beginAtZero: true, ticks: { color: p.hint }, grid: { display: false } },
      }),
    },
  }

  const refusalRows = d.refusals
    ? [
        // Two lines per bar (a phone is narrow): the reason, then whose limit or what was refused.
        ...d.refusals.ledger.map((r) => ({
          label: [reasonText(lang, r.reason), reasonText(lang, `${r.scope}/${r.unit}`)],
          count: r.count,
        })),
        ...d.refusals.admission.map((r) => ({
          label: [reasonText(lang, r.reason), reasonText(lang, 'admission')],
          count: r.count,
        })),
      ]
    : []
  const refusals: ChartConfiguration | null = d.refusals && {
    type: 'bar',
    data: {
      labels: refusalRows.map((r) => r.label),
      datasets: [{ label: '', data: refusalRows.map((r) => r.count), backgroundColor: p.bad }],
    },
    options: horizontal,
  }
  return { revenue, states, sla, experts, drafts, refusals, refusalCount: refusalRows.length }
}
