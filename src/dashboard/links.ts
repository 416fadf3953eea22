import type { Api } from 'grammy'
import type { InlineKeyboardButton } from 'grammy/types'
import type { DeskRuntime, LoadedConfig } from '../config/load'
import type { Deps } from '../deps'
import { cut } from '../text'

/**
 * Where Telegram opens the dashboard, and the buttons that open it.
 *
 * - The page: <dashboard.publicUrl>/dashboard/<slug>/ (HTTPS: Telegram opens Mini Apps over HTTPS only).
 * - In a private chat with the bot: a web_app button (a menu button per staff member, set at start and by
 *   /dashboard; an inline button on /dashboard's answer). Telegram sends initData signed with this bot's token.
 * - In the staff group: web_app inline buttons are private-chat only, so /report carries a URL button with the
 *   bot's Mini App direct link (t.me/<bot>/<app>?startapp=..., or t.me/<bot>?startapp=... for the Main Mini App),
 *   which needs the Mini App set up in BotFather with the page's URL (README: the dashboard).
 * Without dashboard.publicUrl no button is shown or set (the page is still served at its path).
 */

type DashboardConfig = Pick<LoadedConfig, 'dashboard'>

export function dashboardUrl(config: DashboardConfig, desk: Pick<DeskRuntime, 'slug'>): string | undefined {
  const base = config.dashboard.enabled ? config.dashboard.publicUrl : undefined
  return base ? `${base.replace(/\/+$/, '')}/dashboard/${desk.slug}/` : undefined
}

/** The Mini App direct link that opens the dashboard from any chat, the staff group included. */
export function dashboardDirectLink(
  config: DashboardConfig,
  desk: Pick<DeskRuntime, 'slug'>,
  botUsername: string,
): string | undefined {
  if (!dashboardUrl(config, desk)) return undefined
  const app = config.dashboard.appNames[desk.slug]
  return `https://t.me/${botUsername}${app ? `/${app}` : ''}?startapp=overview`
}

/** The URL button /report carries in the staff group (none when the dashboard has no public URL). */
export function reportDashboardButton(
  config: DashboardConfig,
  desk: Pick<DeskRuntime, 'slug'>,
  botUsername: string,
  text: string,
): InlineKeyboardButton[][] | undefined {
  const url = dashboardDirectLink(config, desk, botUsername)
  return url ? [[{ text, url }]] : undefined
}

/** The web_app button for a private chat with the bot. */
export function webAppButton(
  config: DashboardConfig,
  desk: Pick<DeskRuntime, 'slug'>,
  text: string,
): InlineKeyboardButton[][] | undefined {
  const url = dashboardUrl(config, desk)
  return url ? [[{ text, web_app: { url } }]] : undefined
}

/** Sets the menu button of one staff member's private chat with the bot to the dashboard; false if Telegram refused. */
export async function setMenuButton(
  api: Api,
  deps: Pick<Deps, 'config' | 'i18n' | 'log'>,
  desk: DeskRuntime,
  userId: number,
): Promise<boolean> {
  const url = dashboardUrl(deps.config, desk)
  if (!url) return false
  try {
    await api.setChatMenuButton({
      chat_id: userId,
      menu_button: {
        type: 'web_app',
        text: deps.i18n.t(desk.defaultLanguage, 'dashboard-menu-button'),
        web_app: { url },
      },
    })
    return true
  } catch (err) {
    // Typically "chat not found": the staff member has not opened a chat with the bot yet; /dashboard sets it later.
    deps.log.info(
      { desk: desk.slug, user: userId, error: cut((err as Error).message, 200) },
      'dashboard menu button not set',
    )
    return false
  }
}

/**
 * At start: the menu button of every staff member's private chat (per chat, not the bot's default, so clients never
 * see a button that opens a page they may not use).
 */
export async function setStaffMenuButtons(
  api: Api,
  deps: Pick<Deps, 'config' | 'i18n' | 'log'>,
  desk: DeskRuntime,
): Promise<void> {
  if (!deps.config.dashboard.menuButton || !dashboardUrl(deps.config, desk)) return
  const staff = new Set([...desk.staff.admins, ...desk.staff.experts])
  for (const id of staff) await setMenuButton(api, deps, desk, id)
}
