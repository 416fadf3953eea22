import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
import { z } from 'zod'
import type { Deps } from '../deps'
import { type Access, authorize, findDesk, initDataFromHeader, type Viewer } from './access'
import { EXPORT_KINDS, exportCsv, exportLink, MAX_EXPORT_DAYS } from './dashboard.export'
import type { ErrorDto, ExportKind } from './dashboard.model'
import { overview } from './dashboard.overview'
import {
  consultationDetail,
  consultations,
  DashboardError,
  dateRange,
  dayRange,
  me,
  payments,
  refund,
} from './dashboard.service'
import {
  createPlan,
  createTariff,
  dateBody,
  deletePlan,
  deleteTariff,
  editField,
  fieldBody,
  invite,
  inviteBody,
  pause,
  pauseBody,
  planBody,
  readSettings,
  removeDay,
  SettingsAnswer,
  setZone,
  staffAction,
  staffBody,
  tariffBody,
  versionBody,
  zoneBody,
} from './dashboard.settings'
import { verifyExport } from './export-token'

/**
 * The dashboard's HTTP side, under /dashboard/<desk slug>/:
 *
 *   GET  /                       the page (static, no data)          GET /app.js, /app.css   the bundle
 *   GET  api/me                  who is looking, the desk            GET api/overview?days=7|30|90
 *   GET  api/consultations?state&tariff&expert&from&to&q&before      GET api/consultations/<id>
 *   GET  api/payments?status&from&to&before                          POST api/payments/<id>/refund {confirmCharge, topUps?}
 *   POST api/export {kind, days | from, to}  -> a signed link         GET  export/<kind>.csv?t=<token>
 *   GET  api/settings (owner, admins; src/dashboard/dashboard.settings.ts), and with {version, ...}:
 *   POST api/settings/field {target, value}   POST api/settings/(tariffs|plans) {code, title, ...}
 *   POST api/settings/(tariffs|plans)/<code>/pause {paused}   POST api/settings/(tariffs|plans)/<code>/delete
 *   POST api/settings/zone {zone}   POST api/settings/(holidays|extra)/remove {date}
 *   POST api/settings/staff/<id> {action}   POST api/settings/invites {role, uses} (no version)
 *
 * Every api/ request carries `Authorization: tma <initData>`; anything that does not pass (src/dashboard/access.ts)
 * gets 401 or 403 and a body that names only the status. Handlers parse, call one service function, answer JSON.
 */

export type ExtraRoute = (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<boolean>

const DESK_PATH = /^\/dashboard\/([a-z0-9-]{1,32})(\/.*)?$/
const ASSET = /^\/([a-z0-9-]+\.(?:js|css|map))$/
/** A terms or privacy text of 4000 characters, in Cyrillic, as JSON. */
const MAX_BODY = 16_384

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

/**
 * The page loads only its own files and talks only to this server. Telegram Web shows Mini Apps in an iframe, so
 * framing is not forbidden.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  })
  res.end(JSON.stringify(body))
}

function refuse(res: ServerResponse, status: number, error: string): void {
  json(res, status, { error } satisfies ErrorDto)
}

/** The client went away (or timed out) while sending its body: nobody is left to answer, and nothing failed here. */
class BodyAborted extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0
  const chunks: Buffer[] = []
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_BODY) throw new DashboardError(400, 'body-too-large')
      chunks.push(chunk)
    }
  } catch (err) {
    if (err instanceof DashboardError) throw err
    throw new BodyAborted((err as Error).message)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
  } catch {
    throw new DashboardError(400, 'bad-json')
  }
}

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER)
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)
const overviewQuery = z.object({ days: z.coerce.number().int().default(30) })
const consultationQuery = z.object({
  state: z.enum(['waiting', 'active', 'closed', 'revoked']).optional(),
  tariff: z.string().max(64).optional(),
  expert: id.optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  q: z.string().max(200).optional(),
  before: id.optional(),
})
const paymentQuery = z.object({
  status: z.enum(['refunded', 'not-refunded']).optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  before: id.optional(),
})
const refundBody = z.object({
  confirmCharge: z.string().min(1).max(256),
  /** Top-up payments to refund with it (those the page listed). */
  topUps: z.array(id).max(50).optional(),
})
const exportBody = z.union([
  z.object({
    kind: z.enum(EXPORT_KINDS as [ExportKind, ...ExportKind[]]),
    days: z.number().int().min(1).max(MAX_EXPORT_DAYS),
  }),
  z.object({ kind: z.enum(EXPORT_KINDS as [ExportKind, ...ExportKind[]]), from: isoDate, to: isoDate }),
])

/** Blank values of a query string count as absent ("?state=" is "any state"). */
function queryOf(url: URL): Record<string, string> {
  return Object.fromEntries([...url.searchParams].filter(([, v]) => v !== ''))
}

type ApiHandler = (viewer: Viewer, m: RegExpExecArray, url: URL, req: IncomingMessage) => Promise<unknown>

export function dashboardRoutes(deps: Deps): ExtraRoute {
  const webDir = path.resolve(deps.config.dashboard.webDir)
  const log = deps.log.child({ part: 'dashboard' })
  let warnedMissing = false

  const api: { method: string; path: RegExp; run: ApiHandler }[] = [
    { method: 'GET', path: /^me$/, run: async (v) => me(deps, v) },
    {
      method: 'GET',
      path: /^overview$/,
      run: (v, _m, url) => overview(deps, v, overviewQuery.parse(queryOf(url)).days),
    },
    {
      method: 'GET',
      path: /^consultations$/,
      run: (v, _m, url) => consultations(deps, v, consultationQuery.parse(queryOf(url))),
    },
    {
      method: 'GET',
      path: /^consultations\/(\d{1,15})$/,
      run: (v, m) => consultationDetail(deps, v, Number(m[1])),
    },
    {
      method: 'GET',
      path: /^payments$/,
      run: (v, _m, url) => payments(deps, v, paymentQuery.parse(queryOf(url))),
    },
    {
      method: 'POST',
      path: /^payments\/(\d{1,15})\/refund$/,
      run: async (v, m, _url, req) => {
        const b = refundBody.parse(await readJson(req))
        return refund(deps, v, Number(m[1]), b.confirmCharge, b.topUps)
      },
    },
    { method: 'GET', path: /^settings$/, run: (v) => readSettings(deps, v) },
    {
      method: 'POST',
      path: /^settings\/field$/,
      run: async (v, _m, _u, req) => editField(deps, v, fieldBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/tariffs$/,
      run: async (v, _m, _u, req) => createTariff(deps, v, tariffBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/plans$/,
      run: async (v, _m, _u, req) => createPlan(deps, v, planBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/(tariffs|plans)\/([a-z0-9][a-z0-9_-]{0,31})\/pause$/,
      run: async (v, m, _u, req) =>
        pause(deps, v, m[1] as 'tariffs' | 'plans', m[2]!, pauseBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/tariffs\/([a-z0-9][a-z0-9_-]{0,31})\/delete$/,
      run: async (v, m, _u, req) =>
        deleteTariff(deps, v, m[1]!, versionBody.parse(await readJson(req)).version),
    },
    {
      method: 'POST',
      path: /^settings\/plans\/([a-z0-9][a-z0-9_-]{0,31})\/delete$/,
      run: async (v, m, _u, req) =>
        deletePlan(deps, v, m[1]!, versionBody.parse(await readJson(req)).version),
    },
    {
      method: 'POST',
      path: /^settings\/zone$/,
      run: async (v, _m, _u, req) => setZone(deps, v, zoneBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/(holidays|extra)\/remove$/,
      run: async (v, m, _u, req) =>
        removeDay(deps, v, m[1] as 'holidays' | 'extra', dateBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/staff\/(\d{1,15})$/,
      run: async (v, m, _u, req) => staffAction(deps, v, Number(m[1]), staffBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^settings\/invites$/,
      run: async (v, _m, _u, req) => invite(deps, v, inviteBody.parse(await readJson(req))),
    },
    {
      method: 'POST',
      path: /^export$/,
      run: async (v, _m, _url, req) => {
        const b = exportBody.parse(await readJson(req))
        const now = new Date()
        const range = 'days' in b ? dayRange(v.desk, b.days, now) : dateRange(v.desk, b.from, b.to)
        return exportLink(v, b.kind, range, now)
      },
    },
  ]

  async function serveFile(res: ServerResponse, name: string): Promise<void> {
    const file = path.join(webDir, name)
    let body: Buffer
    try {
      body = await readFile(file)
    } catch {
      if (!warnedMissing) {
        warnedMissing = true
        log.warn({ webDir }, 'dashboard page not built: run npm run build')
      }
      res.writeHead(404).end()
      return
    }
    const html = name.endsWith('.html')
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
      // The page names its bundle with a content hash (?v=), so the bundle may be cached; the page may not.
      'cache-control': html ? 'no-cache' : 'public, max-age=86400',
      ...(html ? PAGE_HEADERS : { 'x-content-type-options': 'nosniff' }),
    })
    res.end(body)
  }

  async function serveApi(req: IncomingMessage, res: ServerResponse, slug: string, rest: string, url: URL) {
    const route = api.find((r) => r.path.test(rest))
    if (!route) return refuse(res, 404, 'not-found')
    if (req.method !== route.method) return refuse(res, 405, 'method-not-allowed')
    const access: Access = authorize(
      deps.config,
      slug,
      initDataFromHeader(req.headers.authorization),
      new Date(),
    )
    if (!access.ok) {
      log.info(
        { desk: slug, status: access.status, reason: access.reason, path: rest },
        'dashboard access refused',
      )
      return refuse(res, access.status, access.status === 403 ? 'forbidden' : 'unauthorized')
    }
    const out = await route.run(access.viewer, route.path.exec(rest)!, url, req)
    if (out instanceof SettingsAnswer) return json(res, out.status, out.body)
    return json(res, 200, out)
  }

  async function serveExport(res: ServerResponse, slug: string, kind: string, url: URL) {
    const desk = findDesk(deps.config, slug)!
    const grant = verifyExport(desk.token, url.searchParams.get('t') ?? '', new Date())
    if (!grant || grant.kind !== kind) return refuse(res, 401, 'unauthorized')
    const csv = await exportCsv(deps, desk, grant)
    res.writeHead(200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${csv.filename}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    res.end(csv.body)
  }

  return async (req, res, pathname) => {
    const m = DESK_PATH.exec(pathname)
    if (!m) return false
    const slug = m[1]!
    const rest = m[2]
    try {
      if (!findDesk(deps.config, slug)) {
        refuse(res, 404, 'not-found')
        return true
      }
      const url = new URL(req.url ?? '/', 'http://localhost')
      if (rest?.startsWith('/api/')) {
        await serveApi(req, res, slug, rest.slice('/api/'.length), url)
        return true
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        refuse(res, 405, 'method-not-allowed')
        return true
      }
      const exp = /^\/export\/([a-z]+)\.csv$/.exec(rest ?? '')
      if (rest === undefined) {
        // The page's relative URLs (app.js, api/...) need the trailing slash.
        res.writeHead(308, { location: `${slug}/` }).end()
      } else if (rest === '/') await serveFile(res, 'index.html')
      else if (exp) await serveExport(res, slug, exp[1]!, url)
      else {
        const asset = ASSET.exec(rest)
        if (asset) await serveFile(res, asset[1]!)
        else refuse(res, 404, 'not-found')
      }
    } catch (err) {
      if (err instanceof DashboardError) refuse(res, err.status, err.code)
      else if (err instanceof z.ZodError)
        // The fields of the request that were wrong (names of the API's own fields, no data).
        json(res, 400, {
          error: 'bad-request',
          issues: err.issues.map((i) => ({ field: i.path.join('.'), message: i.message })),
        })
      else if (err instanceof BodyAborted) {
        // A slow or cut upload (a phone losing its network): the client's doing, one quiet line.
        log.info({ path: rest, reason: err.message }, 'dashboard request body aborted by the client')
        if (!res.headersSent) refuse(res, 400, 'body-aborted')
      } else {
        log.error({ err: { message: (err as Error).message }, path: rest }, 'dashboard request failed')
        if (!res.headersSent) refuse(res, 500, 'internal')
        else res.end()
      }
    }
    return true
  }
}
