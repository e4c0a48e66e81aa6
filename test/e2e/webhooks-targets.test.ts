/**
 * Webhook targets inside the service's own network: refused by default, on both surfaces, when
 * registered or changed, and again at delivery time (after DNS, on every redirect); allowed with
 * ALLOW_PRIVATE_WEBHOOK_TARGETS=true (plain http only to private hosts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const INTERNAL = [
  'https://127.0.0.1/hook',
  'https://localhost/hook',
  'https://10.1.2.3/hook',
  'https://192.168.0.10/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://[::1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
]

let server: TestServer
let dev: { id: string; key: string }
let agent: string
let rx: Receiver

const legacy = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

beforeAll(async () => {
  rx = startReceiver()
  server = await startTestServer()
  dev = await server.developer()
  agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
})

afterAll(async () => {
  await server?.stop()
  await rx?.stop()
})

describe('refused by default', () => {
  for (const url of INTERNAL) {
    test(`v1 and legacy refuse ${url}`, async () => {
      const v1 = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url } })
      expect(v1.status).toBe(400)
      expect(v1.body).toMatchObject({ field: 'url' })
      expect(v1.body.error).toContain("inside the service's own network")
      const old = await legacy('POST', '/webhooks/endpoints', { url, event_types: ['lead.captured'] })
      expect(old.status).toBe(400)
      expect(old.body.detail).toContain("inside the service's own network")
    })
  }

  test('plain http is refused (https only)', async () => {
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'http://1.1.1.1/' } })).body.error).toBe('url: must use https (got http)')
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'http://1.1.1.1/', event_types: ['voice.call.ended'] })).status).toBe(400)
  })

  test('PATCH to an internal URL is refused too', async () => {
    const hook = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://1.1.1.1/hook' } })
    expect(hook.status).toBe(201)
    const res = await server.api('PATCH', `/webhooks/${hook.body.id}`, { key: dev.key, body: { url: 'https://127.0.0.1/x' } })
    expect(res.status).toBe(400)
    const ep = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/hook', event_types: ['lead.captured'] })
    expect((await legacy('PATCH', `/webhooks/endpoints/${ep.body.endpoint.id}`, { url: 'https://10.0.0.1/' })).status).toBe(400)
  })

  test('an email address without SMTP_URL is accepted (kept in the outbox); a malformed one is a 400 naming url', async () => {
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'ops@example.com' } })).status).toBe(201)
    const res = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'ops@example' } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ field: 'url' })
  })

  test('checked again at delivery time: a target that became internal is refused and counted as a failure', async () => {
    const hook = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://1.1.1.1/hook', events: ['lead.captured'] } })
    // As if its DNS name were re-pointed inside our network after registration.
    const webhooks = await server.server.services.store.collection({ name: 'webhooks', indexes: [] })
    await webhooks.update(hook.body.id, { url: `${rx.url}/hook` })
    await server.server.services.bus.publish({ type: 'lead.captured', workspaceId: dev.id, agentId: agent, data: {} })
    const read = await until(
      'the refused attempt',
      async () => {
        const r = await server.api('GET', `/webhooks/${hook.body.id}`, { key: dev.key })
        return r.body.delivery.failuresInARow === 1 ? r.body : undefined
      },
      WAIT_MS,
    )
    expect(read.delivery.lastError).toContain('refused to connect to 127.0.0.1 (loopback address)')
    expect(rx.received).toHaveLength(0)
  })
})

describe('allowed with ALLOW_PRIVATE_WEBHOOK_TARGETS=true', () => {
  let open: TestServer
  let d: { id: string; key: string }
  let a: string
  const openLegacy = (method: string, path: string, body?: unknown) =>
    fetch(`${open.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${d.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

  beforeAll(async () => {
    open = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
    d = await open.developer()
    a = (await open.api('POST', '/agents', { key: d.key, body: { name: 'Ava' } })).body.id
  })
  afterAll(() => open?.stop())

  test('loopback and http are accepted and delivered to', async () => {
    const hook = await open.api('POST', '/webhooks', { key: d.key, body: { agent: a, url: `${rx.url}/ok` } })
    expect(hook.status).toBe(201)
    await open.server.services.bus.publish({ type: 'lead.captured', workspaceId: d.id, agentId: a, data: { ok: true } })
    const [got] = await rx.waitFor(1)
    expect(got.path).toBe('/ok')
    await open.api('DELETE', `/webhooks/${hook.body.id}`, { key: d.key })
  })

  for (const url of ['http://1.1.1.1/hook', 'http://[2606:4700:4700::1111]/hook', 'http://example.com/hook']) {
    test(`plain http to a public address is still refused: ${url}`, async () => {
      const v1 = await open.api('POST', '/webhooks', { key: d.key, body: { agent: a, url } })
      expect(v1.status).toBe(400)
      expect(v1.body).toMatchObject({ field: 'url' })
      expect(v1.body.error).toContain('plain http is accepted only for private or loopback addresses')
      const old = await openLegacy('POST', '/webhooks/endpoints', { url, event_types: ['lead.captured'] })
      expect(old).toMatchObject({ status: 400, body: { status: 400 } })
      expect(old.body.detail).toContain('plain http is accepted only for private or loopback addresses')
    })
  }

  test('PATCH to a public http URL is refused on both surfaces', async () => {
    const hook = await open.api('POST', '/webhooks', { key: d.key, body: { agent: a, url: 'https://1.1.1.1/hook' } })
    expect((await open.api('PATCH', `/webhooks/${hook.body.id}`, { key: d.key, body: { url: 'http://1.1.1.1/hook' } })).status).toBe(400)
    const ep = await openLegacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/hook', event_types: ['lead.captured'] })
    expect(ep.status).toBe(200)
    expect((await openLegacy('PATCH', `/webhooks/endpoints/${ep.body.endpoint.id}`, { url: 'http://1.1.1.1/hook' })).status).toBe(400)
  })

  test('at delivery, an http URL that now leads outside is refused and counted as a failure', async () => {
    const hook = await open.api('POST', '/webhooks', { key: d.key, body: { agent: a, url: `${rx.url}/private`, events: ['conversation.resolved'] } })
    expect(hook.status).toBe(201)
    const webhooks = await open.server.services.store.collection({ name: 'webhooks', indexes: [] })
    await webhooks.update(hook.body.id, { url: 'http://1.1.1.1/hook' })
    await open.server.services.bus.publish({ type: 'conversation.resolved', workspaceId: d.id, agentId: a, data: {} })
    const read = await until(
      'the refused attempt',
      async () => {
        const r = await open.api('GET', `/webhooks/${hook.body.id}`, { key: d.key })
        return r.body.delivery.failuresInARow === 1 ? r.body : undefined
      },
      WAIT_MS,
    )
    expect(read.delivery.lastError).toContain('plain http is accepted only for private or loopback addresses')
  })
})
