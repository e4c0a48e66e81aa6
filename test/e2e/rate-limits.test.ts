/**
 * v1 ceilings per plan (src/catalog/limits.ts): conversation reads and replies per key
 * a minute, and call lines; every 429 carries Retry-After as a whole number of seconds.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CALL_CEILINGS, V1_RATES } from '../../src/catalog/limits'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const wholeSeconds = (value: string | null) => /^[1-9]\d*$/.test(value ?? '')

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.stop())

test("conversation reads: the plan's ceiling per key a minute, then 429 with Retry-After in whole seconds", async () => {
  const free = await s.developer({ plan: 'free' })
  await advance(60_000)
  const limit = V1_RATES.free.conversationReads
  for (let i = 0; i < limit; i++) expect((await s.api('GET', '/conversations?limit=1', { key: free.key })).status).toBe(200)
  const refused = await s.api('GET', `/conversations/conv_nope/messages`, { key: free.key })
  expect(refused.status).toBe(429)
  expect(wholeSeconds(refused.headers.get('retry-after'))).toBe(true)
  expect(refused.headers.get('x-ratelimit-limit')).toBe(String(limit))
  // Another plan, another ceiling.
  const pro = await s.developer({ plan: 'pro' })
  expect((await s.api('GET', '/conversations?limit=1', { key: pro.key })).headers.get('x-ratelimit-limit')).toBe(String(V1_RATES.pro.conversationReads))
  await advance(60_000)
  expect((await s.api('GET', '/conversations?limit=1', { key: free.key })).status).toBe(200)
})

test("replies: the plan's ceiling per key a minute (refused ones count too), then 429", async () => {
  const dev = await s.developer({ plan: 'free' })
  await advance(60_000)
  const limit = V1_RATES.free.replies
  for (let i = 0; i < limit; i++) expect((await s.api('POST', '/conversations/conv_nope/reply', { key: dev.key, body: { text: 'hi' } })).status).toBe(404)
  const refused = await s.api('POST', '/conversations/conv_nope/reply', { key: dev.key, body: { text: 'hi' } })
  expect(refused.status).toBe(429)
  expect(wholeSeconds(refused.headers.get('retry-after'))).toBe(true)
})

test('call lines: the plan’s concurrent calls, then 429 with Retry-After', async () => {
  const dev = await s.developer({ plan: 'free' })
  const agent = (await s.agent(dev.key, { name: 'Lines', voice: { answersCalls: true } })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155559000', source: 'rented', agent })
  const lines = CALL_CEILINGS.free.lines
  for (let i = 0; i <= lines; i++) {
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: `+1415555901${i}` })
    await s.console('PUT', `/sandbox/phones/%2B1415555901${i}`, { pickup: 'no_answer', ringMs: 120_000 })
  }
  for (let i = 0; i < lines; i++) expect((await s.api('POST', '/calls', { key: dev.key, body: { to: `+1415555901${i}`, purpose: 'Hello' } })).status).toBe(202)
  const refused = await s.api('POST', '/calls', { key: dev.key, body: { to: `+1415555901${lines}`, purpose: 'Hello' } })
  expect(refused.status).toBe(429)
  expect(wholeSeconds(refused.headers.get('retry-after'))).toBe(true)
  await advance(121_000)
})
