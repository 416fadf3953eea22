import {
  hasWebviewProxy,
  isIframe,
  on,
  postEvent,
  request,
  retrieveLaunchParams,
  retrieveRawInitData,
  supports,
} from '@telegram-apps/bridge'

/**
 * What the page takes from Telegram. Telegram opens a Mini App with its launch parameters in the URL's hash
 * (tgWebAppData = the signed initData, tgWebAppThemeParams, tgWebAppVersion, tgWebAppPlatform); the page reads them
 * with @telegram-apps/bridge (bundled: nothing is loaded from telegram.org), or from window.Telegram.WebApp if
 * Telegram's own telegram-web-app.js happens to be on the page. Everything else (ready, expand, the back button,
 * downloads, theme changes) goes through the same bridge, and is skipped outside Telegram.
 */

export type Theme = Record<string, string>

export interface Launch {
  /** The raw signed query string, sent as `Authorization: tma <initData>`; undefined outside Telegram. */
  initData: string | undefined
  theme: Theme
  languageCode: string | undefined
  version: string
  /** Someone to talk to: a Telegram app's WebView (TelegramWebviewProxy) or Telegram Web's iframe. */
  inTelegram: boolean
}

interface WebAppGlobal {
  initData?: string
  themeParams?: Theme
  version?: string
  initDataUnsafe?: { user?: { language_code?: string } }
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

function normalizeTheme(t: Record<string, unknown> | undefined): Theme {
  const out: Theme = {}
  for (const [k, v] of Object.entries(t ?? {})) if (typeof v === 'string') out[snake(k)] = v
  return out
}

function languageOf(initData: string | undefined): string | undefined {
  try {
    const user = new URLSearchParams(initData ?? '').get('user')
    return user ? (JSON.parse(user) as { language_code?: string }).language_code : undefined
  } catch {
    return undefined
  }
}

export function readLaunch(): Launch {
  const w = (window as unknown as { Telegram?: { WebApp?: WebAppGlobal } }).Telegram?.WebApp
  if (w?.initData)
    return {
      initData: w.initData,
      theme: normalizeTheme(w.themeParams),
      languageCode: w.initDataUnsafe?.user?.language_code ?? languageOf(w.initData),
      version: w.version ?? '6.0',
      inTelegram: true,
    }
  try {
    // Also found after a reload, when the hash is gone: the bridge keeps the launch parameters for the session.
    const lp = retrieveLaunchParams()
    const initData = retrieveRawInitData()
    return {
      initData,
      theme: normalizeTheme(lp.tgWebAppThemeParams as Record<string, unknown>),
      languageCode: languageOf(initData),
      version: lp.tgWebAppVersion,
      inTelegram: hasWebviewProxy(window) || isIframe(),
    }
  } catch {
    // Not opened by Telegram (or launch parameters it does not know): the API will say "not authorised".
    const initData = new URLSearchParams(window.location.hash.slice(1)).get('tgWebAppData') ?? undefined
    return {
      initData,
      theme: {},
      languageCode: languageOf(initData) ?? navigator.language,
      version: '6.0',
      inTelegram: false,
    }
  }
}

function safely(f: () => void): void {
  try {
    f()
  } catch {
    // Outside Telegram there is no one to tell.
  }
}

export function telegramReady(launch: Launch): void {
  if (!launch.inTelegram) return
  safely(() => postEvent('web_app_ready'))
  safely(() => postEvent('web_app_expand'))
}

export function onThemeChanged(f: (t: Theme) => void): void {
  safely(() => on('theme_changed', (e) => f(normalizeTheme(e.theme_params as Record<string, unknown>))))
}

export function showBackButton(launch: Launch, visible: boolean): void {
  if (launch.inTelegram && supports('web_app_setup_back_button', launch.version))
    safely(() => postEvent('web_app_setup_back_button', { is_visible: visible }))
}

export function onBackButton(f: () => void): void {
  safely(() => on('back_button_pressed', f))
}

/**
 * Saves a file: Telegram (8.0+) downloads the URL itself; elsewhere an ordinary download link is clicked. The URL
 * carries its own short-lived token, so neither needs the page's initData.
 */
export async function downloadFile(launch: Launch, url: string, fileName: string): Promise<void> {
  const absolute = new URL(url, window.location.href).href
  if (launch.inTelegram && supports('web_app_request_file_download', launch.version)) {
    try {
      await request('web_app_request_file_download', 'file_download_requested', {
        params: { url: absolute, file_name: fileName },
        timeout: 15_000,
      })
      return
    } catch {
      // No answer from the app: try the ordinary way.
    }
  }
  const a = document.createElement('a')
  a.href = absolute
  a.download = fileName
  document.body.append(a)
  a.click()
  a.remove()
}
