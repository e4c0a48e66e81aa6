/**
 * v1 webhooks end to end: a real server (private targets allowed, so it can reach a real
 * receiver on 127.0.0.1), events published on its bus, and the receiver checking what arrived
 * byte for byte. Signing, the event id header, the five-failure switch-off and its notification,
 * PATCH forgiveness, a slow endpoint not delaying a fast one, paging, and tenancy.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import type { EventType } from '../../src/events/catalogue'
import { webhooksFeature } from '../../src/features/webhooks'
import { owedV1Id } from '../../src/features/webhooks/v1-delivery'
import { type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let server: TestServer
let rx: Receiver
let dev: { id: string; key: string }
let agent: string

const publish = (type: EventType, data: Record<string, unknown>, agentId = agent, workspaceId = dev.id) => server.server.services.bus.publish({ type, workspaceId, agentId, data })

/**
 * Resolves once `event` can no longer reach the webhook: a delivery owed to it is recorded before
 * publish resolves and leaves the record only once attempted or dropped (switched off, not
 * subscribed), so after this "nothing arrived" cannot be undone by a late delivery.
 */
async function settled(event: { id: string }, hookId: string): Promise<void> {
  const owed = await server.server.services.store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
  await until(
    `the delivery of ${event.id} to ${hookId} settled`,
    () => owed.get(owedV1Id(event.id, hookId)),
    (d) => d === null,
  )
}
async function createHook(body: Record<string, unknown>, opts: { key?: string; workspace?: string } = {}) {
  const res = await server.api('POST', '/webhooks', { key: opts.key ?? dev.key, workspace: opts.workspace, body: { agent, url: `${rx.url}/hook`, ...body } })
  expect(res.status).toBe(201)
  return res.body as { id: string; signingSecret: string; [k: string]: unknown }
}

beforeAll(async () => {
  rx = startReceiver()
  server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  dev = await server.developer({ name: 'Hooks dev', plan: 'pro' })
  agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
})

afterAll(async () => {
  await server?.stop()
  await rx?.stop()
})

describe('register and read', () => {
  test('create answers 201 with the signing secret once; events omitted read ["*"]; GET never shows the secret', async () => {
    const hook = await createHook({})
    expect(hook).toMatchObject({ agent, url: `${rx.url}/hook`, events: ['*'], enabled: true, delivery: { failuresInARow: 0, lastStatus: null, lastError: null, lastSentAt: null } })
    expect(hook.id).toStartWith('wh_')
    expect(hook.signingSecret).toStartWith('whsec_')
    const read = await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })
    expect(read.status).toBe(200)
    expect(read.body.signingSecret).toBeUndefined()
    // Stored sealed: the plain secret is nowhere in the stored document.
    const stored = await server.server.services.store.collection({ name: 'webhooks', indexes: [] }).then((c) => c.get(hook.id))
    expect(JSON.stringify(stored)).not.toContain(hook.signingSecret)
    await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
  })

  test('agent and url are required; unknown agent 404; bad events 400', async () => {
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { url: 'https://1.1.1.1/' } })).body.field).toBe('agent')
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent } })).body.field).toBe('url')
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent: 'ag_nope', url: 'https://1.1.1.1/' } })).status).toBe(404)
    const bad = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://1.1.1.1/', events: ['call.exploded'] } })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toStartWith('events[0]:')
    const star = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://1.1.1.1/', events: ['*', 'lead.captured'] } })
    expect(star.body).toMatchObject({ field: 'events' })
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'ftp://1.1.1.1/' } })).body.field).toBe('url')
  })

  test('a body that is not a JSON object answers 400 naming body (create and PATCH)', async () => {
    const hook = await createHook({ url: 'https://1.1.1.1/obj' })
    for (const raw of ['[]', '[{"enabled":false}]', '5', 'true']) {
      for (const [method, path] of [
        ['PATCH', `/webhooks/${hook.id}`],
        ['POST', '/webhooks'],
      ]) {
        const res = await server.api(method, path, { key: dev.key, raw })
        expect({ raw, method, status: res.status, body: res.body }).toEqual({ raw, method, status: 400, body: { error: 'body: must be an object', field: 'body' } })
      }
    }
    expect((await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })).body.enabled).toBe(true)
    await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
  })

  test('a URL with a user name or password is refused at create and PATCH (400 naming url), never stored', async () => {
    const withCredentials = 'https://user:s3cret@1.1.1.1/in'
    const created = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: withCredentials } })
    expect(created).toMatchObject({ status: 400, body: { field: 'url' } })
    expect(created.body.error).toStartWith('url: must not contain a user name or password')
    expect(JSON.stringify(created.body)).not.toContain('s3cret')
    const hook = await createHook({ url: 'https://1.1.1.1/plain' })
    const patched = await server.api('PATCH', `/webhooks/${hook.id}`, { key: dev.key, body: { url: withCredentials } })
    expect(patched).toMatchObject({ status: 400, body: { field: 'url' } })
    expect((await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })).body.url).toBe('https://1.1.1.1/plain')
    await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
  })

  test('list: newest first, agent filter, cursor paging', async () => {
    const other = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ben' } })).body.id
    const a = await createHook({ url: 'https://1.1.1.1/a' })
    const b = await createHook({ url: 'https://1.1.1.1/b' })
    const c = await createHook({ agent: other, url: 'https://1.1.1.1/c' })
    const all = await server.api('GET', '/webhooks?limit=2', { key: dev.key })
    expect(all.body.items.map((w: { id: string }) => w.id)).toEqual([c.id, b.id])
    const next = await server.api('GET', `/webhooks?limit=2&cursor=${all.body.nextCursor}`, { key: dev.key })
    expect(next.body.items.map((w: { id: string }) => w.id)).toEqual([a.id])
    expect(next.body.nextCursor).toBeNull()
    const mine = await server.api('GET', `/webhooks?agent=${other}`, { key: dev.key })
    expect(mine.body.items.map((w: { id: string }) => w.id)).toEqual([c.id])
    for (const h of [a, b, c]) expect((await server.api('DELETE', `/webhooks/${h.id}`, { key: dev.key })).status).toBe(204)
    expect((await server.api('GET', `/webhooks/${a.id}`, { key: dev.key })).status).toBe(404)
  })
})

describe('delivery', () => {
  test('one signed POST per event: { event, sentAt, data }, HMAC of the raw bytes, event id header', async () => {
    const hook = await createHook({ events: ['lead.captured'] })
    rx.received.length = 0
    const data = { conversationId: 'conv_1', channel: 'web', test: false, name: 'Ria Sen', email: 'ria@example.com', phone: '+919800000000', note: 'wants a demo – ünïcode ✓' }
    const event = await publish('lead.captured', data)
    const unsubscribed = await publish('conversation.resolved', { conversationId: 'conv_1', channel: 'web', test: false, status: 'resolved' })
    const [got] = await rx.waitFor(1)
    await settled(unsubscribed, hook.id)
    expect(rx.received).toHaveLength(1) // not subscribed to conversation.resolved
    const expected = `sha256=${createHmac('sha256', hook.signingSecret).update(got.raw).digest('hex')}`
    expect(got.headers.get('x-service-signature')).toBe(expected)
    expect(got.headers.get('x-service-event-id')).toBe(event.id)
    expect(got.headers.get('x-service-event')).toBe('lead.captured')
    expect(got.headers.get('x-service-webhook-id')).toBe(hook.id)
    expect(got.headers.get('content-type')).toBe('application/json')
    expect(got.json).toEqual({ event: 'lead.captured', sentAt: expect.any(String), data })
    // The OpenAPI callback documents every header that arrived (content-type is its requestBody).
    const doc = (await (await fetch(`${server.url}/api/v1/docs/json`)).json()) as any
    const documented = doc.paths['/api/v1/webhooks'].post.callbacks['lead.captured']['{$request.body#/url}'].post.parameters.map((p: { name: string }) => p.name)
    const sent = [...got.headers.keys()].filter((h) => h.startsWith('x-service-') || h === 'user-agent')
    expect(documented.toSorted()).toEqual(sent.toSorted())
    const read = await until(
      'the outcome to be recorded',
      async () => {
        const r = await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })
        return r.body.delivery.lastStatus === 200 ? r.body : undefined
      },
      WAIT_MS,
    )
    expect(read.delivery).toMatchObject({ failuresInARow: 0, lastStatus: 200, lastError: null, lastSentAt: expect.any(String) })
    await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
  })

  test('call.analysed carries the call object as data (any v1 event type is deliverable)', async () => {
    const hook = await createHook({ events: ['call.analysed'] })
    rx.received.length = 0
    const call = { id: 'out_1', status: 'missed', attempt: 1, fields: {}, summary: null, agent: { id: agent, name: 'Ava' }, retryScheduledFor: '2026-01-01T00:00:00.000Z' }
    await publish('call.analysed', call)
    const [got] = await rx.waitFor(1)
    expect(got.json).toMatchObject({ event: 'call.analysed', data: call })
    await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
  })

  test('another agent’s events are not sent; a deleted webhook receives nothing', async () => {
    const hook = await createHook({})
    rx.received.length = 0
    const other = await publish('lead.captured', { name: 'x' }, 'ag_someone_else')
    expect((await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })).status).toBe(204)
    const after = await publish('lead.captured', { name: 'y' })
    // A delivery is owed (recorded) when its event is dispatched, before publish resolves, and
    // leaves the record only once the receiver has answered: no record and nothing received means
    // none was owed, so none can arrive later.
    const owed = await server.server.services.store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
    for (const e of [other, after]) expect(await owed.get(owedV1Id(e.id, hook.id))).toBeNull()
    expect(rx.received).toHaveLength(0)
  })

  test('five failures in a row switch it off (with lastError and a notification); PATCH enabled: true forgives', async () => {
    const customer = (await server.api('POST', '/customers', { key: dev.key, body: { name: 'Acme Stores' } })).body
    const inside = (await server.api('POST', '/agents', { key: dev.key, workspace: customer.id, body: { name: 'Acme bot' } })).body.id
    const hook = await createHook({ agent: inside }, { workspace: customer.id })
    rx.received.length = 0
    rx.respond(500)
    for (let i = 1; i <= 4; i++) {
      await publish('lead.captured', { n: i }, inside, customer.id)
      await rx.waitFor(i)
    }
    const four = await until(
      'four failures',
      async () => {
        const r = await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key, workspace: customer.id })
        return r.body.delivery.failuresInARow === 4 ? r.body : undefined
      },
      WAIT_MS,
    )
    expect(four).toMatchObject({ enabled: true, delivery: { lastStatus: 500, lastError: 'HTTP 500: nope 500' } })
    await publish('lead.captured', { n: 5 }, inside, customer.id)
    await rx.waitFor(5)
    const off = await until(
      'the switch-off',
      async () => {
        const r = await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key, workspace: customer.id })
        return r.body.enabled === false ? r.body : undefined
      },
      WAIT_MS,
    )
    expect(off.delivery).toMatchObject({ failuresInARow: 5, lastError: 'switched off after 5 failed deliveries in a row: HTTP 500: nope 500' })

    // Switched off: the next event is not attempted.
    rx.respond(200)
    await settled(await publish('lead.captured', { n: 6 }, inside, customer.id), hook.id)
    expect(rx.received).toHaveLength(5)

    // Rule 8: the developer is told, with the customer's name in the title.
    const notes = await until(
      'the notification',
      async () => {
        const r = await server.console('GET', `/workspaces/${dev.id}/notifications`)
        return r.body.items.length > 0 ? r.body.items : undefined
      },
      WAIT_MS,
    )
    expect(notes[0]).toMatchObject({ kind: 'webhook.disabled', title: `[Acme Stores] Webhook switched off: ${rx.url}/hook`, customer: { id: customer.id, name: 'Acme Stores' } })
    expect(notes[0].body).toContain('PATCH /webhooks/')
    const own = await server.console('GET', `/workspaces/${customer.id}/notifications`)
    expect(own.body.items.map((n: { id: string }) => n.id)).toEqual([notes[0].id])
    expect((await server.console('GET', '/workspaces/ws_unknown/notifications')).status).toBe(404)

    const back = await server.api('PATCH', `/webhooks/${hook.id}`, { key: dev.key, workspace: customer.id, body: { enabled: true } })
    expect(back.status).toBe(200)
    expect(back.body).toMatchObject({ enabled: true, delivery: { failuresInARow: 0 } })
    await publish('lead.captured', { n: 7 }, inside, customer.id)
    const all = await rx.waitFor(6)
    expect(all[5].json.data).toEqual({ n: 7 })
  })

  test('a redirect is a failed delivery naming where it pointed; it is not followed', async () => {
    const elsewhere = startReceiver()
    try {
      const hook = await createHook({ events: ['lead.captured'] })
      for (const [i, status] of [301, 302, 303, 307, 308].entries()) {
        rx.received.length = 0
        rx.respond(status, 0, { location: `${elsewhere.url}/moved` })
        await publish('lead.captured', { n: i })
        await rx.waitFor(1)
        const read = await until(
          `failure ${i + 1} to be recorded`,
          async () => {
            const r = await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })
            return r.body.delivery.failuresInARow === i + 1 ? r.body : undefined
          },
          WAIT_MS,
        )
        expect(read.delivery.lastStatus).toBe(status)
        // The fifth (308) also switches it off: lastError then starts with why.
        expect(read.delivery.lastError).toEndWith(`HTTP ${status}: redirected to ${elsewhere.url}/moved; webhook deliveries do not follow redirects, register that URL instead`)
      }
      expect(elsewhere.received).toHaveLength(0)
      await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
    } finally {
      rx.respond(200)
      await elsewhere.stop()
    }
  })

  test('PATCH url and events take effect; enabled: false stops deliveries', async () => {
    const other = startReceiver()
    try {
      const hook = await createHook({ events: ['lead.captured'] })
      const patched = await server.api('PATCH', `/webhooks/${hook.id}`, { key: dev.key, body: { url: `${other.url}/moved`, events: ['conversation.escalated'] } })
      expect(patched.body).toMatchObject({ url: `${other.url}/moved`, events: ['conversation.escalated'] })
      await publish('conversation.escalated', { conversationId: 'conv_2' })
      const [got] = await other.waitFor(1)
      expect(got.path).toBe('/moved')
      const off = await server.api('PATCH', `/webhooks/${hook.id}`, { key: dev.key, body: { enabled: false } })
      expect(off.body.enabled).toBe(false)
      await settled(await publish('conversation.escalated', { conversationId: 'conv_3' }), hook.id)
      expect(other.received).toHaveLength(1)
      expect((await server.api('PATCH', `/webhooks/${hook.id}`, { key: dev.key, body: { nope: 1 } })).status).toBe(400)
      await server.api('DELETE', `/webhooks/${hook.id}`, { key: dev.key })
    } finally {
      await other.stop()
    }
  })

  test('a slow endpoint does not delay a fast one', async () => {
    const slow = startReceiver()
    const fast = startReceiver()
    const release = slow.hold()
    try {
      const s = await createHook({ url: `${slow.url}/slow` })
      const f = await createHook({ url: `${fast.url}/fast` })
      for (let i = 0; i < 20; i++) await publish('lead.captured', { i })
      // The slow one has deliveries in flight and answers none until released, yet the fast one
      // gets all 20: nothing of the fast one waits on the slow one. (Speed: bench:webhooks.)
      await slow.waitFor(1)
      await fast.waitFor(20)
      expect(slow.answered).toBe(0)
      release()
      await slow.waitFor(20)
      await until('the slow endpoint to answer all 20', () => slow.answered === 20, WAIT_MS)
      await server.api('DELETE', `/webhooks/${s.id}`, { key: dev.key })
      await server.api('DELETE', `/webhooks/${f.id}`, { key: dev.key })
    } finally {
      await fast.stop()
      await slow.stop()
    }
  })

  test('a deleted customer’s webhooks are switched off (both surfaces)', async () => {
    const customer = (await server.api('POST', '/customers', { key: dev.key, body: { name: 'Gone Ltd' } })).body
    const inside = (await server.api('POST', '/agents', { key: dev.key, workspace: customer.id, body: { name: 'Gone bot' } })).body.id
    const hook = await createHook({ agent: inside }, { workspace: customer.id })
    const legacyEp = await server.server.services.of(webhooksFeature).legacyWebhooks.create(customer.id, { url: 'https://1.1.1.1/legacy', event_types: ['lead.captured'] })
    const gone = await server.api('DELETE', `/customers/${customer.id}`, { key: dev.key })
    expect(gone.status).toBe(200)
    expect((await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key, workspace: customer.id })).status).toBe(410)
    expect((await server.server.services.of(webhooksFeature).legacyWebhooks.get(customer.id, legacyEp.doc.number)).isActive).toBe(false)
    const stored = await server.server.services.of(webhooksFeature).webhooks.present(await server.server.services.of(webhooksFeature).webhooks.get(customer.id, hook.id))
    expect(stored.enabled).toBe(false)
    // The reader of a restored customer's webhooks sees why they are off.
    expect(stored.delivery.lastError).toBe(`switched off: customer ${customer.id} was deleted`)
    rx.received.length = 0
    await settled(await publish('lead.captured', { n: 1 }, inside, customer.id), hook.id)
    expect(rx.received).toHaveLength(0)
  })
})

describe('tenancy', () => {
  test("another workspace's webhook answers 404 to read, change and delete", async () => {
    const hook = await createHook({ url: 'https://1.1.1.1/mine' })
    const other = await server.developer({ name: 'Other dev' })
    for (const [method, body] of [['GET'], ['PATCH', { enabled: false }], ['DELETE']] as const) {
      const res = await server.api(method, `/webhooks/${hook.id}`, { key: other.key, body })
      expect(res.status).toBe(404)
    }
    expect((await server.api('GET', '/webhooks', { key: other.key })).body.items).toEqual([])
    expect((await server.api('GET', `/webhooks/${hook.id}`, { key: dev.key })).body.enabled).toBe(true)
  })
})
