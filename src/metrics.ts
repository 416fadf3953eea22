import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The process's Prometheus metrics (prom-client), served on GET /metrics (src/server/metrics.ts). One registry per
 * process: every process (bot, worker) exposes its own counters; a scrape sums them over processes. Values that live
 * in PostgreSQL (queue depths, the oldest job's age, dead letters) are read from the database at scrape time, so
 * every process reports the same figure for them: take max(), not sum(), over processes.
 *
 * Modules record with the `metrics` object below; a counter's labels are short enums, never ids (no cardinality
 * blow-up).
 */
export const registry = new Registry()
// The process's own figures: CPU, resident memory, heap, event-loop lag, open handles.
collectDefaultMetrics({ register: registry })

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Counter<L>({ name, help, labelNames, registers: [registry] })

export const metrics = {
  updates: counter('desk_updates_total', 'Updates handled from the inbox, by type and outcome', [
    'type',
    'outcome',
  ] as const),
  handlerSeconds: new Histogram<'type'>({
    name: 'desk_update_handler_seconds',
    help: 'Time an update handler took (the middleware, from take to done or failure)',
    labelNames: ['type'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
  deliveries: counter(
    'desk_deliveries_total',
    'Messages relayed between a client and a topic, by result (sent, blocked, failed, ...)',
    ['result'] as const,
  ),
  notifications: counter('desk_notifications_total', 'Outbox notifications sent, by result', [
    'result',
  ] as const),
  telegram429: counter('telegram_429_total', 'Bot API calls answered 429 Too Many Requests, by method', [
    'method',
  ] as const),
  telegramRetryAfter: counter(
    'telegram_retry_after_seconds_total',
    'Sum of retry_after seconds Telegram asked for in 429 answers',
    ['method'] as const,
  ),
  ledgerReserves: counter('ledger_reserves_total', 'Ledger reservations, by outcome (reserved or refused)', [
    'outcome',
  ] as const),
  ledgerRefusals: counter('ledger_refusals_total', 'Ledger refusals, by reason', ['reason'] as const),
  slaReminders: counter('desk_sla_reminders_total', 'SLA reminders posted to a topic'),
  slaBreaches: counter(
    'desk_sla_breaches_total',
    'SLA breaches recorded, by the outcome of the breach policy',
    ['outcome'] as const,
  ),
  payments: counter('desk_payments_total', 'Successful payments recorded (first time only), by kind', [
    'kind',
  ] as const),
  paymentStars: counter('desk_payment_stars_total', 'Stars of successful payments recorded', [
    'kind',
  ] as const),
  planChargesRefused: counter(
    'desk_plan_charges_refused_total',
    "Support-plan charges recorded but granting nothing (amount not the link's price, plan ended or replaced), by reason",
    ['reason'] as const,
  ),
  refunds: counter('desk_refunds_total', 'Refunds done, by source', ['source'] as const),
  refundStars: counter('desk_refund_stars_total', 'Stars refunded', ['source'] as const),
  llmTokens: counter('llm_tokens_total', 'LLM tokens used by drafts, by direction (input, output)', [
    'direction',
  ] as const),
  llmCost: counter('llm_cost_minor_total', 'LLM cost of drafts, in the minor unit of llm.currency', [
    'currency',
  ] as const),
}

/** Gauges whose value is computed at scrape time (database reads, pool stats); registered once per process. */
export function collectedGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect: (set: (labels: Partial<Record<L, string>>, value: number) => void) => Promise<void> | void,
): Gauge<L> {
  const existing = registry.getSingleMetric(name)
  if (existing) registry.removeSingleMetric(name)
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset()
      await collect((labels, value) => this.set(labels, value))
    },
  })
}
