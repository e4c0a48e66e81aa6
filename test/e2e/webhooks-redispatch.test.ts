/**
 * An event whose dispatch a crash interrupted is dispatched again after the restart (events/bus.ts).
 * That second dispatch must not deliver again what the first already delivered: a v1 webhook gets
 * each event at most once (one attempt, no retry: docs/spec.md Events rule 1), and a legacy delivery
 * that succeeded is not sent again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let rx: Receiver

beforeAll(async () => {
  rx = startReceiver()
  s = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
})
afterAll(async () => {
  await s?.stop()
  await rx?.stop()
})

test('a re-dispatched event reaches no v1 webhook or succeeded legacy delivery twice', async () => {
  const dev = await s.developer()
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
  expect((await s.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `${rx.url}/v1`, events: ['lead.captured'] } })).status).toBe(201)
  const legacy = await fetch(`${s.url}/webhooks/endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${rx.url}/legacy`, event_types: ['lead.captured'] }),
  })
  expect(legacy.status).toBe(200)
  const bus = s.server.services.bus
  const event = await bus.publish({ type: 'lead.captured', workspaceId: dev.id, agentId: agent, data: { name: 'Ria' } })
  await rx.waitFor(2)
  await until(
    'the legacy success recorded',
    async () => {
      const list = (await fetch(`${s.url}/webhooks/endpoints/${((await legacy.clone().json()) as any).endpoint.id}/deliveries`, { headers: { authorization: `Bearer ${dev.key}` } }).then((r) =>
        r.json(),
      )) as any
      return list.deliveries[0]?.status === 'success'
    },
    WAIT_MS,
  )
  // As if the process had died before marking the event dispatched.
  await bus.events.update(event.id, { dispatched: false })
  expect(await bus.redispatch()).toBe(1)
  await Bun.sleep(200)
  expect(rx.received.map((r) => r.path).sort()).toEqual(['/legacy', '/v1'])
})
