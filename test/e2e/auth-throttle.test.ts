/**
 * Refused credentials from one address, against the real server: the default limit's worth are
 * each a plain 401, then every request from that address that sends credentials is 429 with
 * Retry-After and X-RateLimit-* in its surface's shape (a right key too), while requests without
 * credentials (health, the visitor API) go on. The window is a wall-clock minute, so this file
 * checks the refusal and leaves its end to test/http/auth-throttle.test.ts.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEFAULT_AUTH_FAILURES_PER_MINUTE } from '../../src/config'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let key: string

beforeAll(async () => {
  s = await startTestServer()
  key = (await s.developer()).key
})
afterAll(() => s?.stop())

const call = (path: string, authorization?: string) =>
  fetch(`${s.url}${path}`, { headers: authorization ? { authorization } : {} }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as any }))

test('refused keys and console tokens from one address: 401s up to the limit, then 429 for any credentials', async () => {
  const statuses: number[] = []
  // Half bad keys on v1 and legacy, half bad console tokens: one count per address.
  for (let i = 0; i < DEFAULT_AUTH_FAILURES_PER_MINUTE; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, j) =>
        j % 3 === 0 ? call('/console/workspaces', `Bearer wrong-${i + j}`) : call(j % 3 === 1 ? '/api/v1/agents' : '/agents/ag_x/status', `Bearer sk_wrong${i + j}`),
      ),
    )
    statuses.push(...batch.map((r) => r.status))
  }
  expect(statuses.filter((x) => x !== 401)).toEqual([])

  const next = await call('/api/v1/agents', 'Bearer sk_wrong-again')
  expect(next.status).toBe(429)
  expect(next.body.error).toContain('too many failed authentications from this address')
  expect(Number(next.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(next.headers.get('x-ratelimit-limit')).toBe(String(DEFAULT_AUTH_FAILURES_PER_MINUTE))
  expect(next.headers.get('x-ratelimit-remaining')).toBe('0')
  expect(Number(next.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1)

  // A right key from that address too: it is not even looked at.
  const good = await call('/api/v1/agents', `Bearer ${key}`)
  expect(good.status).toBe(429)
  const legacy = await call('/agents/ag_x/status', `Bearer ${key}`)
  expect(legacy).toMatchObject({ status: 429, body: { status: 429 } })
  expect((await call('/console/workspaces', `Bearer ${s.consoleToken}`)).status).toBe(429)

  // Requests without credentials are not braked.
  expect((await fetch(`${s.url}/health`)).status).toBe(200)
  expect((await call('/api/v1/agents')).status).toBe(401)
})
