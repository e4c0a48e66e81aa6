/** Console takeover / resolve / escalate (docs/design.md console table), seen in the API, on the bus and in analytics. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { RecordedEvent } from '../../src/events/bus'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let agent: string
const events: RecordedEvent[] = []

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer()
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Helper' } })).body.id
  s.server.services.bus.subscribe((e) => void events.push(e))
})
afterAll(() => s.stop())

async function conversation(): Promise<string> {
  const r = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: 'Hello there' } })
  expect(r.status).toBe(200)
  // Test chat paces on the service clock: one message a second per session.
  await s.console('POST', '/clock/advance', { ms: 2000 })
  return r.body.session
}

test('resolve: status resolved, conversation.resolved emitted once, counted by analytics', async () => {
  const id = await conversation()
  const r = await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/resolve`)
  expect(r.status).toBe(200)
  expect(r.body).toMatchObject({ id, status: 'resolved' })
  expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/resolve`)).body.status).toBe('resolved')
  expect(events.filter((e) => e.type === 'conversation.resolved' && e.data.conversationId === id)).toHaveLength(1)
  const listed = (await s.api('GET', '/conversations', { key: dev.key })).body.items.find((c: any) => c.id === id)
  expect(listed.status).toBe('resolved')
  const a = await s.api('GET', `/agents/${agent}/analytics`, { key: dev.key })
  expect(a.body.totals.resolved).toBe(1)
})

test('takeover: handled by a person, counted in human_handled and neededAPerson', async () => {
  const id = await conversation()
  const r = await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/takeover`)
  expect(r.body).toMatchObject({ id, status: 'handled' })
  const a = await s.api('GET', `/agents/${agent}/analytics`, { key: dev.key })
  expect(a.body.totals.human_handled).toBe(1)
  expect(a.body.derived.neededAPerson).toBe(1)
})

test('escalate: escalated with conversation.escalated; unknown ids and workspaces are 404', async () => {
  const id = await conversation()
  const r = await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/escalate`)
  expect(r.body).toMatchObject({ id, status: 'escalated' })
  expect(events.some((e) => e.type === 'conversation.escalated' && e.data.conversationId === id)).toBe(true)
  expect((await s.console('POST', `/workspaces/${dev.id}/conversations/conv_nope/resolve`)).status).toBe(404)
  const other = await s.developer()
  expect((await s.console('POST', `/workspaces/${other.id}/conversations/${id}/resolve`)).status).toBe(404)
  expect((await s.console('POST', `/workspaces/ws_nope/conversations/${id}/resolve`)).status).toBe(404)
})

test('conversation reads are limited to 120 a minute per key: 429 with Retry-After, then a new window', async () => {
  const key = (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'reader', scope: 'read' })).body.key
  await s.console('POST', '/clock/advance', { ms: 60_000 }) // a fresh window
  const statuses: number[] = []
  let last: any
  for (let i = 0; i < 121; i++) {
    last = await s.api('GET', '/conversations?limit=1', { key })
    statuses.push(last.status)
  }
  expect(statuses.slice(0, 120).every((st) => st === 200)).toBe(true)
  expect(statuses[120]).toBe(429)
  expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0)
  expect(last.headers.get('x-ratelimit-remaining')).toBe('0')
  await s.console('POST', '/clock/advance', { ms: 60_000 })
  expect((await s.api('GET', '/conversations?limit=1', { key })).status).toBe(200)
})
