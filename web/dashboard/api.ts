/**
 * The dashboard's JSON API (relative to the page: /dashboard/<slug>/api/...). Every request carries the launch data
 * as `Authorization: tma <initData>`; no cookies, nothing stored.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** The whole answer (a settings refusal carries the fields, a conflict the current settings). */
    readonly body: unknown = {},
  ) {
    super(`${status} ${code}`)
  }
}

export type Api = <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>

export function createApi(initData: string | undefined): Api {
  return async <T>(path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(`api/${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(initData ? { authorization: `tma ${initData}` } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      credentials: 'omit',
      cache: 'no-store',
    })
    const body = (await res.json().catch(() => ({}))) as { error?: string }
    if (!res.ok) throw new ApiError(res.status, body.error ?? 'error', body)
    return body as T
  }
}

/** A query string of the set values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `?${s}` : ''
}
