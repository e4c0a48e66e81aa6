/** Which API surface a path belongs to: it decides the error shape and the OpenAPI document. */
export type Surface = 'v1' | 'console' | 'legacy'

export const V1_PREFIX = '/api/v1'

export function surfaceOf(path: string): Surface {
  if (path === V1_PREFIX || path.startsWith(`${V1_PREFIX}/`)) return 'v1'
  if (path === '/console' || path.startsWith('/console/')) return 'console'
  return 'legacy'
}

/**
 * The website widget's visitor API: v1 paths (its error shape, its OpenAPI document) that carry no
 * API key, since a web page calls them; a signed visitor session stands in for one.
 */
export const VISITOR_PREFIX = `${V1_PREFIX}/web/`

export const isVisitorPath = (path: string): boolean => path.startsWith(VISITOR_PREFIX)

/**
 * Checks a request's credentials (key or console token) for a surface, throwing the ApiError the
 * surface would answer (401, or 403 for a read key that writes); answers whether the path needs
 * any (false: a public path, its routes authenticate otherwise or not at all). Bodies are read
 * before the request context runs, so json-body.ts runs it first, and the error plugin before
 * reporting a body that did not parse: a body is only read and reported for callers who may send it.
 */
export type CredentialCheck = (request: Request, surface: Surface) => Promise<boolean>

/**
 * The path of a request's URL as the router sees it (the text between the host and `?`), without
 * parsing the whole URL: `new URL()` on every request of every route was a measurable share of a
 * request. Bun hands requests over with an absolute URL.
 */
export function pathOf(request: Request): string {
  const url = request.url
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  const end = query === -1 ? hash : hash === -1 ? query : Math.min(query, hash)
  return end === -1 ? url.slice(start) : url.slice(start, end)
}
