import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js'
import { useEffect, useRef } from 'preact/hooks'

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
)

/** Colours of the charts, from the Telegram theme (CSS variables set by main.tsx). */
export interface Palette {
  text: string
  hint: string
  grid: string
  accent: string
  good: string
  bad: string
  warn: string
  muted: string
}

export function palette(): Palette {
  const css = getComputedStyle(document.documentElement)
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback
  return {
    text: v('--tg-text', '#000000'),
    hint: v('--tg-hint', '#999999'),
    grid: v('--tg-grid', 'rgba(127,127,127,0.2)'),
    accent: v('--tg-button', '#2481cc'),
    good: '#31a24c',
    bad: v('--tg-destructive', '#e53935'),
    warn: '#f0a020',
    muted: v('--tg-hint', '#999999'),
  }
}

/**
 * One Chart.js chart on a canvas. Drawn without animation (what the page shows is final at once, in a screenshot
 * too); the number of drawn elements is put on the canvas as data-points, so a test can tell an empty canvas from a
 * chart with its bars and points, and the value axes' ticks as data-ticks.
 */
export function ChartBox(props: {
  name: string
  label: string
  config: ChartConfiguration
  height?: number
}) {
  const ref = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const canvas = ref.current
    if (!canvas) return
    const p = palette()
    const base = props.config
    const chart = new Chart(canvas, {
      ...base,
      options: {
        ...base.options,
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        color: p.text,
        plugins: {
          ...base.options?.plugins,
          legend: { labels: { color: p.text, boxWidth: 12 }, ...base.options?.plugins?.legend },
        },
      },
    } as ChartConfiguration)
    const points = chart.data.datasets.reduce((n, _d, i) => n + chart.getDatasetMeta(i).data.length, 0)
    canvas.dataset.points = String(points)
    // The value axes' ticks, for the same reason (whole numbers on count axes, a 0 on the revenue axis).
    canvas.dataset.ticks = JSON.stringify(
      Object.fromEntries(
        Object.entries(chart.scales)
          .filter(([, scale]) => scale.type === 'linear')
          .map(([id, scale]) => [id, scale.ticks.map((tick) => tick.value)]),
      ),
    )
    return () => chart.destroy()
  }, [props.config])
  return (
    <div class="chart" style={{ height: `${props.height ?? 220}px` }}>
      <canvas ref={ref} data-chart={props.name} role="img" aria-label={props.label} />
    </div>
  )
}

/**
 * Axes coloured for the theme. Values are counts or whole Stars: ticks are whole numbers (no "0.5 consultations"),
 * and 0 is always a labelled tick with a stronger line, also when refunds take the axis below it.
 */
export function axes(p: Palette, extra: Record<string, unknown> = {}) {
  const grid = {
    color: (c: { tick?: { value: number } }) => (c.tick?.value === 0 ? p.hint : p.grid),
  }
  const axis = { ticks: { color: p.hint, precision: 0 }, grid, afterBuildTicks: withZero }
  return { x: { ...axis }, y: { ...axis, beginAtZero: true }, ...extra }
}

/** Adds a tick at 0 to a value axis that spans it without one. */
export function withZero(axis: { min: number; max: number; ticks: { value: number }[] }): void {
  if (axis.min < 0 && axis.max > 0 && !axis.ticks.some((t) => t.value === 0)) {
    axis.ticks.push({ value: 0 })
    axis.ticks.sort((a, b) => a.value - b.value)
  }
}
