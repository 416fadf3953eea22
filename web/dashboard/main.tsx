import { render } from 'preact'
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { MeDto } from '../../src/dashboard/dashboard.model'
import { ApiError, createApi } from './api'
import { ConsultationPage, Consultations } from './consultations'
import { type Lang, pickLang, translator } from './i18n'
import { Overview } from './overview'
import { Payments } from './payments'
import { Settings } from './settings'
import {
  type Launch,
  onBackButton,
  onThemeChanged,
  readLaunch,
  showBackButton,
  type Theme,
  telegramReady,
} from './telegram'
import './styles.css'

/**
 * The staff dashboard, a Telegram Mini App: four pages (overview, consultations, payments and settings, the last
 * two for the owner and admins) and a consultation's page, in the Telegram theme and the user's language. It holds
 * no data of its own and no login: every request carries the launch data Telegram signed, and the server decides
 * what this user may see.
 */

/** Telegram theme keys -> CSS variables (styles.css falls back to a light theme outside Telegram). */
function applyTheme(theme: Theme): void {
  const root = document.documentElement.style
  const map: Record<string, string> = {
    bg_color: '--tg-bg',
    text_color: '--tg-text',
    hint_color: '--tg-hint',
    link_color: '--tg-link',
    button_color: '--tg-button',
    button_text_color: '--tg-button-text',
    secondary_bg_color: '--tg-secondary-bg',
    section_bg_color: '--tg-section-bg',
    destructive_text_color: '--tg-destructive',
    accent_text_color: '--tg-accent',
    section_header_text_color: '--tg-section-header',
  }
  for (const [key, variable] of Object.entries(map)) {
    const value = theme[key]
    if (value && /^#[0-9a-fA-F]{3,8}$/.test(value)) root.setProperty(variable, value)
  }
}

type Tab = 'overview' | 'consultations' | 'payments' | 'settings'

function App(props: { launch: Launch }) {
  const { launch } = props
  const [lang, setLang] = useState<Lang>(pickLang(launch.languageCode))
  const [me, setMe] = useState<MeDto | null>(null)
  const [denied, setDenied] = useState<401 | 403 | null>(null)
  const [failed, setFailed] = useState(false)
  const [tab, setTab] = useState<Tab>('overview')
  const [open, setOpen] = useState<number | null>(null)
  const [themeKey, setThemeKey] = useState(0)
  const api = useMemo(() => createApi(launch.initData), [launch.initData])
  const t = useMemo(() => translator(lang), [lang])

  useEffect(() => {
    api<MeDto>('me').then(
      (m) => {
        setMe(m)
        setLang(m.lang)
      },
      (e) => {
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) setDenied(e.status)
        else setFailed(true)
      },
    )
    onThemeChanged((theme) => {
      applyTheme(theme)
      setThemeKey((k) => k + 1)
    })
    onBackButton(() => setOpen(null))
  }, [])
  useEffect(() => showBackButton(launch, open !== null), [open])
  useEffect(() => {
    document.title = me ? `${t('title')} · ${me.desk.name}` : t('title')
    document.documentElement.lang = lang
  }, [me, lang])

  if (denied)
    return (
      <main class="denied" data-denied={denied}>
        <h1>{t('not-authorised')}</h1>
        <p class="hint">{t(denied === 403 ? 'not-authorised-403' : 'not-authorised-401')}</p>
      </main>
    )
  if (failed)
    return (
      <main class="denied">
        <p class="error">{t('error-generic')}</p>
      </main>
    )
  if (!me)
    return (
      <main>
        <p class="hint">{t('loading')}</p>
      </main>
    )

  const tabs: Tab[] =
    me.role === 'admin'
      ? ['overview', 'consultations', 'payments', 'settings']
      : ['overview', 'consultations']
  return (
    <main data-role={me.role}>
      <header>
        <h1>{me.desk.name}</h1>
        <nav class="tabs">
          {tabs.map((x) => (
            <button
              type="button"
              key={x}
              class={tab === x && open === null ? 'on' : ''}
              data-tab={x}
              onClick={() => {
                setOpen(null)
                setTab(x)
              }}
            >
              {t(`tab-${x}`)}
            </button>
          ))}
        </nav>
      </header>
      {open !== null ? (
        <ConsultationPage api={api} me={me} t={t} lang={lang} id={open} onBack={() => setOpen(null)} />
      ) : tab === 'overview' ? (
        <Overview api={api} me={me} t={t} lang={lang} themeKey={themeKey} />
      ) : tab === 'consultations' ? (
        <Consultations api={api} me={me} t={t} lang={lang} onOpen={setOpen} />
      ) : tab === 'payments' ? (
        <Payments api={api} me={me} t={t} lang={lang} launch={launch} />
      ) : (
        <Settings api={api} me={me} t={t} lang={lang} />
      )}
    </main>
  )
}

const launch = readLaunch()
applyTheme(launch.theme)
telegramReady(launch)
render(<App launch={launch} />, document.getElementById('app')!)
