/** Erasure takes a customer's webhooks with it: endpoints (with sealed secrets) and delivery records, both surfaces. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

const DAY = 86_400_000
let s: TestServer
beforeAll(async () => {
  s = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
})
afterAll(() => s.stop())

test('after 30 days a deleted customer has no v1 webhooks, legacy endpoints or deliveries left', async () => {
  const dev = await s.developer()
  const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Hooked' } })).body.id
  const key = (await s.api('POST', `/customers/${customer}/keys`, { key: dev.key, body: { name: 'k', scope: 'full' } })).body.key
  const agent = (await s.api('POST', '/agents', { key, body: { name: 'Hooky' } })).body.id
  expect((await s.api('POST', '/webhooks', { key, body: { agent, url: 'https://hooks.example.com/v1' } })).status).toBe(201)
  const legacy = await fetch(`${s.url}/webhooks/endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/legacy', event_types: ['chat.message.completed'] }),
  })
  expect(legacy.status).toBe(200)
  // The agent goes (its own cascade); an account-wide legacy endpoint (agent_id null) stays until erasure.
  await s.api('DELETE', `/agents/${agent}`, { key })
  const collections = await Promise.all(
    ['webhooks', 'legacy_webhook_endpoints', 'legacy_webhook_deliveries', 'legacy_webhook_numbers'].map((name) => s.server.services.store.collection<any>({ name, indexes: [] })),
  )
  const left = async () => Promise.all(collections.map((c) => c.count({ workspaceId: customer })))
  expect((await left())[1]).toBe(1)

  expect((await s.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
  await s.console('POST', '/clock/advance', { ms: 31 * DAY })
  expect((await s.api('GET', `/customers/${customer}`, { key: dev.key })).status).toBe(404)
  expect(await left()).toEqual([0, 0, 0, 0])
})
