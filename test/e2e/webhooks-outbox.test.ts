/**
 * Email webhooks out of the box: without SMTP_URL each email is kept in the outbox, readable at
 * GET /console/outbox (newest first, paged), with the same delivery bookkeeping as SMTP; a
 * customer's kept emails are erased with the customer.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const DAY = 86_400_000
let server: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  server = await startTestServer()
  dev = await server.developer()
  agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
})
afterAll(() => server?.stop())

test('an email address is accepted without SMTP_URL and each event is kept in the outbox', async () => {
  const hook = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'ops@example.com', events: ['lead.captured', 'conversation.resolved'] } })
  expect(hook.status).toBe(201)
  const bus = server.server.services.bus
  const first = await bus.publish({ type: 'lead.captured', workspaceId: dev.id, agentId: agent, data: { name: 'Ria' } })
  const read = await until(
    'the first outcome',
    async () => {
      const r = await server.api('GET', `/webhooks/${hook.body.id}`, { key: dev.key })
      return r.body.delivery.lastSentAt ? r.body : undefined
    },
    WAIT_MS,
  )
  expect(read).toMatchObject({ enabled: true, delivery: { failuresInARow: 0, lastStatus: 250, lastError: null } })
  const second = await bus.publish({ type: 'conversation.resolved', workspaceId: dev.id, agentId: agent, data: { conversationId: 'conv_1' } })
  const page = await until(
    'two kept emails',
    async () => {
      const r = await server.console('GET', '/outbox')
      return r.body.items.length >= 2 ? r : undefined
    },
    WAIT_MS,
  )
  expect(page.status).toBe(200)
  const [newest, older] = page.body.items
  expect(newest).toMatchObject({ to: 'ops@example.com', eventId: second.id })
  expect(older).toMatchObject({ to: 'ops@example.com', eventId: first.id })
  expect(older.subject).toContain('lead.captured')
  expect(older.text).toContain('"name":"Ria"')
  expect(Object.keys(older).sort()).toEqual(['createdAt', 'eventId', 'id', 'subject', 'text', 'to'])

  const one = await server.console('GET', '/outbox?limit=1')
  expect(one.body.items).toHaveLength(1)
  expect(one.body.nextCursor).toEqual(expect.any(String))
  const next = await server.console('GET', `/outbox?limit=1&cursor=${one.body.nextCursor}`)
  expect(next.body.items[0].id).toBe(older.id)
})

test('the outbox needs the console token', async () => {
  expect((await fetch(`${server.url}/console/outbox`)).status).toBe(401)
})

test("a customer's kept emails are erased with the customer", async () => {
  const customer = (await server.api('POST', '/customers', { key: dev.key, body: { name: 'Mailed' } })).body.id
  const key = (await server.api('POST', `/customers/${customer}/keys`, { key: dev.key, body: { name: 'k', scope: 'full' } })).body.key
  const theirs = (await server.api('POST', '/agents', { key, body: { name: 'Mia' } })).body.id
  expect((await server.api('POST', '/webhooks', { key, body: { agent: theirs, url: 'team@customer.example', events: ['lead.captured'] } })).status).toBe(201)
  const event = await server.server.services.bus.publish({ type: 'lead.captured', workspaceId: customer, agentId: theirs, data: {} })
  const kept = async () => (await server.console('GET', '/outbox?limit=100')).body.items.filter((m: { eventId: string }) => m.eventId === event.id)
  await until('the customer email kept', async () => (await kept()).length === 1, WAIT_MS)
  expect((await server.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
  await server.console('POST', '/clock/advance', { ms: 31 * DAY })
  expect(await kept()).toEqual([])
  // The developer's own emails stay.
  expect((await server.console('GET', '/outbox?limit=100')).body.items).toHaveLength(2) // the first test's two
})
