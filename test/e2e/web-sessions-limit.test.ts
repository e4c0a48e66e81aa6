/**
 * New visitor sessions from one address on one widget: the limit's worth are 201, the next is 429
 * with Retry-After and X-RateLimit-*, another widget's visitors from the same address are not
 * affected, resuming a session is not a new one, and the next minute (service clock) has room again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEFAULT_VISITOR_SESSIONS_PER_MINUTE } from '../../src/config'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let first: string
let second: string

beforeAll(async () => {
  s = await startTestServer()
  const dev = await s.developer()
  first = (await s.agent(dev.key, { name: 'Shop' })).webKey
  second = (await s.agent(dev.key, { name: 'Other shop' })).webKey
})
afterAll(() => s?.stop())

const start = (webKey: string, body: Record<string, unknown> = {}) => s.api('POST', `/web/${webKey}/sessions`, { body })

test('one address: the limit of new sessions a minute per widget, then 429 until the next minute', async () => {
  const statuses: number[] = []
  let kept = ''
  for (let i = 0; i < DEFAULT_VISITOR_SESSIONS_PER_MINUTE; i++) {
    const r = await start(first)
    statuses.push(r.status)
    kept ||= r.body.session
  }
  expect(statuses.filter((x) => x !== 201)).toEqual([])
  const refused = await start(first)
  expect(refused.status).toBe(429)
  expect(refused.headers.get('retry-after')).not.toBeNull()
  expect(refused.headers.get('x-ratelimit-limit')).toBe(String(DEFAULT_VISITOR_SESSIONS_PER_MINUTE))
  expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
  // A visitor who has a session goes on; another widget's visitors from this address too.
  expect((await start(first, { session: kept })).status).toBe(200)
  expect((await start(second)).status).toBe(201)
  await s.console('POST', '/clock/advance', { ms: 60_000 })
  expect((await start(first)).status).toBe(201)
})
