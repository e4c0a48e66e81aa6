/** Which API surface a path belongs to: it decides the error shape and the OpenAPI document. */
export type Surface = 'v1' | 'console' | 'legacy'

export const V1_PREFIX = '/api/v1'

export function surfaceOf(path: string): Surface {
  if (path === V1_PREFIX || path.startsWith(`${V1_PREFIX}/`)) return 'v1'
  if (path === '/console' || path.startsWith('/console/')) return 'console'
  return 'legacy'
}
