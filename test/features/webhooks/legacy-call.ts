/**
 * One request to the legacy API with a Bearer key, its answer checked against the route's
 * documented responses (test/support/response-check.ts): `{ status, body, headers }`.
 */
import type { ResponseChecker } from '../../support/response-check'

export function legacyCall(check: ResponseChecker, method: string, path: string, body: unknown, key: string, base: string) {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => {
    const answer = (await r.json()) as any
    check(method, `${base}${path}`, r.status, answer)
    return { status: r.status, body: answer, headers: r.headers }
  })
}
