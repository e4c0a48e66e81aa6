/**
 * Legacy webhook endpoints end to end: the create/list/read/update/delete routes in the legacy
 * shapes, deliveries on the legacy delivery chart with durable backoff timers driven through the
 * manual clock and POST retry (a SIGKILL between recording an event and delivering it:
 * webhooks-legacy-crash.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import type { EventType } from '../../src/events/catalogue'
import { legacyCall } from '../features/webhooks/legacy-call'
import { type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { type ResponseChecker, responseChecker } from '../support/response-check'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let server: TestServer
let rx: Receiver
let dev: { id: string; key: string }
let agent: string
/** Every legacy answer is checked against the schema its route documents, as server.api does for v1. */
let check: ResponseChecker

const SEC = 1000
const MIN = 60 * SEC

function legacy(method: string, path: string, body?: unknown, key = dev.key, base = server.url) {
  return legacyCall(check, method, path, body, key, base)
}

let agentNumber: number
const publish = (type: EventType, data: Record<string, unknown>, agentId: string | null = agent) => server.server.services.bus.publish({ type, workspaceId: dev.id, agentId, data })

async function endpoint(fields: Record<string, unknown> = {}) {
  const res = await legacy('POST', '/webhooks/endpoints', { url: `${rx.url}/legacy`, event_types: ['chat.message.completed'], ...fields })
  expect(res.status).toBe(200)
  return res.body.endpoint as { id: number; secret: string; [k: string]: unknown }
}

const deliveries = async (id: number) => (await legacy('GET', `/webhooks/endpoints/${id}/deliveries`)).body.deliveries as any[]
const advance = (ms: number) => server.console('POST', '/clock/advance', { ms })

beforeAll(async () => {
  rx = startReceiver()
  server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  check = responseChecker(server.server.app.routes as any)
  dev = await server.developer({ name: 'Legacy dev' })
  agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
  agentNumber = (await legacy('GET', `/agents/${agent}/status`)).body.agent_id
})

afterAll(async () => {
  await server?.stop()
  await rx?.stop()
})

describe('endpoints', () => {
  test('create answers 200 { status: success, endpoint } with the secret once, defaults filled in', async () => {
    const res = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/x', event_types: ['voice.call.ended'], description: 'ops' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ratelimit-limit')).toBe('120')
    const ep = res.body.endpoint
    expect(res.body.status).toBe('success')
    // A copy: bun's toMatchObject writes its matchers into the object it checks.
    expect({ ...ep }).toMatchObject({
      id: expect.any(Number),
      url: 'https://1.1.1.1/x',
      event_types: ['voice.call.ended'],
      agent_id: null,
      description: 'ops',
      is_active: true,
      max_retries: 3,
      timeout_ms: 5000,
      created_at: expect.any(String),
    })
    expect(ep.secret).toStartWith('whsec_')
    const read = await legacy('GET', `/webhooks/endpoints/${ep.id}`)
    expect(read.body.endpoint).toEqual(Object.fromEntries(Object.entries(ep).filter(([k]) => k !== 'secret')))
    const list = await legacy('GET', '/webhooks/endpoints')
    expect(list.body.endpoints.map((e: { id: number }) => e.id)).toContain(ep.id)
    expect(JSON.stringify(list.body)).not.toContain(ep.secret)
    const patched = await legacy('PATCH', `/webhooks/endpoints/${ep.id}`, { description: null, max_retries: 5, is_active: false, agent_id: agentNumber })
    expect(patched.body).toMatchObject({ status: 'success', endpoint: { description: null, max_retries: 5, is_active: false, agent_id: agentNumber } })
    expect(await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)).toMatchObject({ status: 200, body: { status: 'success', endpoint_id: ep.id } })
    expect((await legacy('GET', `/webhooks/endpoints/${ep.id}`)).status).toBe(404)
  })

  test('validation: 422 in the legacy shape for shapes, 400 for https, event types; 404 for an unknown agent', async () => {
    const missing = await legacy('POST', '/webhooks/endpoints', { event_types: ['voice.call.ended'] })
    expect(missing.status).toBe(422)
    expect(missing.body.detail).toContainEqual({ loc: ['body', 'url'], msg: 'is required', type: 'missing' })
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: ['lead.captured'], max_retries: 6 })).body.detail[0].loc).toEqual(['body', 'max_retries'])
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: ['lead.captured'], timeout_ms: 10 })).status).toBe(422)
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: 'lead.captured' })).status).toBe(422)
    const bad = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: ['chat.message.completed', 'call.exploded'] })
    expect(bad).toMatchObject({ status: 400, body: { status: 400 } })
    expect(bad.body.detail).toContain('call.exploded')
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: [] })).status).toBe(400)
    expect((await legacy('POST', '/webhooks/endpoints', { url: 'not a url', event_types: ['lead.captured'] })).status).toBe(400)
    // agent_id is the agent's legacy integer id: anything else is a 422 naming it; a number no agent has is a 404.
    for (const agent_id of ['ag_nope', 'not-a-number', agent, '1', 1.5, 0, true]) {
      const wrong = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: ['lead.captured'], agent_id })
      expect(wrong.status).toBe(422)
      expect(wrong.body.detail[0].loc).toEqual(['body', 'agent_id'])
    }
    expect(await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/', event_types: ['lead.captured'], agent_id: 999 })).toMatchObject({ status: 404, body: { status: 404 } })
    expect((await legacy('GET', '/webhooks/endpoints/1/deliveries?limit=0')).status).toBe(422)
    expect((await legacy('GET', '/webhooks/endpoints/1/deliveries?limit=201')).status).toBe(422)
    expect((await legacy('GET', '/webhooks/endpoints', undefined, 'sk_wrong')).status).toBe(401)
  })

  test('422 locations: path parameters are ["path", name], query stays query, body stays body; each problem once', async () => {
    const loc = async (method: string, path: string, body?: unknown) => {
      const res = await legacy(method, path, body)
      expect(res.status).toBe(422)
      return res.body.detail.map((d: { loc: unknown }) => d.loc)
    }
    expect(await loc('GET', '/webhooks/endpoints/-1')).toEqual([['path', 'endpoint_id']])
    expect(await loc('GET', '/webhooks/endpoints/0')).toEqual([['path', 'endpoint_id']])
    expect(await loc('GET', '/webhooks/endpoints/abc')).toEqual([['path', 'endpoint_id']])
    expect(await loc('GET', '/webhooks/endpoints/-1/deliveries?limit=-1')).toEqual([['path', 'endpoint_id']])
    expect(await loc('POST', '/webhooks/endpoints/-3/deliveries/dlv_x/retry')).toEqual([['path', 'endpoint_id']])
    expect(await loc('GET', '/webhooks/endpoints/1/deliveries?limit=0')).toEqual([['query', 'limit']])
    expect(await loc('PATCH', '/webhooks/endpoints/1', { max_retries: 9 })).toEqual([['body', 'max_retries']])
    // A missing field is one problem, reported once.
    const missing = await legacy('POST', '/webhooks/endpoints', { event_types: ['voice.call.ended'] })
    expect(missing.body.detail).toEqual([{ loc: ['body', 'url'], msg: 'is required', type: 'missing' }])
  })

  test('a body that is not a JSON object answers 422 (create and PATCH)', async () => {
    const ep = await endpoint()
    for (const raw of ['[]', '[{"is_active":false}]', '5', 'true', '"x"']) {
      for (const [method, path] of [
        ['PATCH', `/webhooks/endpoints/${ep.id}`],
        ['POST', '/webhooks/endpoints'],
      ]) {
        const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: raw })
        expect({ raw, method, status: res.status, body: await res.json() }).toEqual({ raw, method, status: 422, body: { detail: [{ loc: ['body'], msg: 'must be an object', type: 'value_error' }] } })
      }
    }
    expect((await legacy('GET', `/webhooks/endpoints/${ep.id}`)).body.endpoint.is_active).toBe(true)
    await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
  })

  test('a URL with a user name or password is refused at create and PATCH (400), never stored', async () => {
    const withCredentials = 'https://user:s3cret@1.1.1.1/in'
    const created = await legacy('POST', '/webhooks/endpoints', { url: withCredentials, event_types: ['lead.captured'] })
    expect(created).toMatchObject({ status: 400, body: { status: 400 } })
    expect(created.body.detail).toStartWith('url must not contain a user name or password')
    expect(created.body.detail).not.toContain('s3cret')
    const ep = await endpoint()
    const patched = await legacy('PATCH', `/webhooks/endpoints/${ep.id}`, { url: withCredentials })
    expect(patched).toMatchObject({ status: 400, body: { status: 400 } })
    expect((await legacy('GET', `/webhooks/endpoints/${ep.id}`)).body.endpoint.url).toBe(`${rx.url}/legacy`)
    await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
  })

  test('ids are per account, never reused after a delete; lists are newest first by id, also within one instant', async () => {
    const a = await server.developer({ name: 'Numbers A' })
    const b = await server.developer({ name: 'Numbers B' })
    const create = async (key: string, n: number) => (await legacy('POST', '/webhooks/endpoints', { url: `https://1.1.1.1/${n}`, event_types: ['lead.captured'] }, key)).body.endpoint.id as number
    // The manual clock stands still: all twelve share one created_at.
    const mine: number[] = []
    for (let i = 0; i < 12; i++) mine.push(await create(a.key, i))
    expect(mine).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    const listed = (await legacy('GET', '/webhooks/endpoints', undefined, a.key)).body.endpoints
    expect(new Set(listed.map((e: { created_at: string }) => e.created_at)).size).toBe(1)
    expect(listed.map((e: { id: number }) => e.id)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    // Another account starts at 1: nothing tells it how many endpoints others have.
    expect(await create(b.key, 0)).toBe(1)
    expect((await legacy('GET', '/webhooks/endpoints/1', undefined, b.key)).body.endpoint.url).toBe('https://1.1.1.1/0')
    expect((await legacy('GET', '/webhooks/endpoints/1', undefined, a.key)).body.endpoint.url).toBe('https://1.1.1.1/0')
    expect((await legacy('GET', '/webhooks/endpoints/2', undefined, b.key)).status).toBe(404)
    // Deleting the highest does not free its number.
    expect((await legacy('DELETE', '/webhooks/endpoints/12', undefined, a.key)).status).toBe(200)
    expect(await create(a.key, 12)).toBe(13)
    // Creates racing in one account each get their own number.
    for (let i = 1; i <= 11; i++) await legacy('DELETE', `/webhooks/endpoints/${i}`, undefined, a.key)
    const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => create(a.key, 100 + i)))
    expect(raced.toSorted((x, y) => x - y)).toEqual([14, 15, 16, 17, 18, 19, 20, 21])
  })

  test('20 endpoints per account; the 21st answers 400', async () => {
    const other = await server.developer({ name: 'Busy' })
    for (let i = 0; i < 20; i++) {
      expect((await legacy('POST', '/webhooks/endpoints', { url: `https://1.1.1.1/${i}`, event_types: ['lead.captured'] }, other.key)).status).toBe(200)
    }
    const over = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/21', event_types: ['lead.captured'] }, other.key)
    expect(over.status).toBe(400)
    expect(over.body.detail).toContain('20')
    // Another account's endpoints are not found from here.
    const theirs = (await legacy('GET', '/webhooks/endpoints', undefined, other.key)).body.endpoints[0].id
    expect((await legacy('GET', `/webhooks/endpoints/${theirs}`)).status).toBe(404)
    expect((await legacy('GET', `/webhooks/endpoints/${theirs}/deliveries`)).status).toBe(404)
  })
})

describe('deliveries', () => {
  test('one signed delivery per matching event, recorded as success', async () => {
    rx.received.length = 0
    rx.respond(200)
    const ep = await endpoint({ event_types: ['chat.message.completed', 'lead.captured'], agent_id: agentNumber })
    const data = { conversationId: 'conv_9', messageId: 'msg_9', channel: 'web', text: 'Hello ✓', completedAt: '2026-01-01T00:00:00.000Z' }
    const event = await publish('chat.message.completed', data)
    await publish('voice.call.ended', { callId: 'out_1' }) // not subscribed
    await publish('lead.captured', { name: 'x' }, 'ag_another') // another agent
    const [got] = await rx.waitFor(1)
    expect(got.headers.get('x-service-signature')).toBe(`sha256=${createHmac('sha256', ep.secret).update(got.raw).digest('hex')}`)
    expect(got.headers.get('x-service-event-id')).toBe(event.id)
    expect(got.headers.get('x-service-delivery-attempt')).toBe('1')
    expect(got.json).toEqual({ id: event.id, event_type: 'chat.message.completed', created_at: event.createdAt, agent_id: agentNumber, data })
    // The OpenAPI callback documents every header that arrived (content-type is its requestBody).
    const doc = (await (await fetch(`${server.url}/docs/json`)).json()) as any
    const documented = doc.paths['/webhooks/endpoints'].post.callbacks['chat.message.completed']['{$request.body#/url}'].post.parameters.map((p: { name: string }) => p.name)
    const sent = [...got.headers.keys()].filter((h) => h.startsWith('x-service-') || h === 'user-agent')
    expect(documented.toSorted()).toEqual(sent.toSorted())
    const [d] = await until(
      'the success to be recorded',
      async () => {
        const list = await deliveries(ep.id)
        return list[0]?.status === 'success' ? list : undefined
      },
      WAIT_MS,
    )
    expect(d).toMatchObject({
      id: got.headers.get('x-service-delivery-id'),
      event_id: event.id,
      event_type: 'chat.message.completed',
      status: 'success',
      response_status: 200,
      error_message: null,
      attempts: 1,
      next_attempt_at: null,
    })
    expect(d.completed_at).toEqual(expect.any(String))
    await Bun.sleep(100)
    expect(rx.received).toHaveLength(1)
    const retry = await legacy('POST', `/webhooks/endpoints/${ep.id}/deliveries/${d.id}/retry`)
    expect(retry.status).toBe(409)
    expect(retry.body).toEqual({ detail: 'delivery is success; only failed deliveries can be retried', status: 409 })
    expect((await legacy('POST', `/webhooks/endpoints/${ep.id}/deliveries/dlv_nope/retry`)).status).toBe(404)
    await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
  })

  test('retries on durable timers through the manual clock; failed when attempts are used up; POST retry resets', async () => {
    rx.received.length = 0
    rx.respond(503)
    const ep = await endpoint({ max_retries: 2 })
    await publish('chat.message.completed', { conversationId: 'conv_r' })
    await rx.waitFor(1)
    let [d] = await until(
      'the first failure',
      async () => {
        const list = await deliveries(ep.id)
        return list[0]?.status === 'retrying' ? list : undefined
      },
      WAIT_MS,
    )
    expect(d).toMatchObject({ status: 'retrying', attempts: 1, response_status: 503, error_message: 'HTTP 503: nope 503' })
    const now = Date.parse((await server.console('GET', '/clock')).body.now)
    expect(Date.parse(d.next_attempt_at)).toBe(now + 30 * SEC)
    const retryPending = await legacy('POST', `/webhooks/endpoints/${ep.id}/deliveries/${d.id}/retry`)
    expect(retryPending.status).toBe(409)
    expect(retryPending.body.detail).toBe('delivery is retrying; only failed deliveries can be retried')

    await advance(29 * SEC) // not yet due
    expect(rx.received).toHaveLength(1)
    await advance(1 * SEC) // the 30 s backoff ends: attempt 2 (answers after it has run)
    expect(rx.received).toHaveLength(2)
    expect(rx.received[1].headers.get('x-service-delivery-attempt')).toBe('2')
    ;[d] = await deliveries(ep.id)
    expect(d).toMatchObject({ status: 'retrying', attempts: 2 })
    await advance(2 * MIN) // second backoff: attempt 3, the last (max_retries 2)
    expect(rx.received).toHaveLength(3)
    ;[d] = await deliveries(ep.id)
    expect(d).toMatchObject({ status: 'failed', attempts: 3, response_status: 503, next_attempt_at: null })
    expect(d.completed_at).toEqual(expect.any(String))
    await advance(60 * MIN)
    expect(rx.received).toHaveLength(3)

    rx.respond(204)
    const retry = await legacy('POST', `/webhooks/endpoints/${ep.id}/deliveries/${d.id}/retry`)
    expect(retry).toMatchObject({ status: 200, body: { status: 'success', delivery_id: d.id } })
    const after = await legacy('GET', `/webhooks/endpoints/${ep.id}/deliveries`)
    expect(['pending', 'success']).toContain(after.body.deliveries[0].status)
    await rx.waitFor(4)
    expect(rx.received[3].headers.get('x-service-delivery-attempt')).toBe('1')
    expect(rx.received[3].headers.get('x-service-event-id')).toBe(rx.received[0].headers.get('x-service-event-id'))
    ;[d] = await until(
      'the retried delivery to succeed',
      async () => {
        const list = await deliveries(ep.id)
        return list[0]?.status === 'success' ? list : undefined
      },
      WAIT_MS,
    )
    expect(d).toMatchObject({ status: 'success', attempts: 1, response_status: 204, error_message: null })
    await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
  })

  test('a redirect is a failed attempt naming where it pointed; it is not followed', async () => {
    try {
      rx.received.length = 0
      rx.respond(302, 0, { location: '/elsewhere' })
      const ep = await endpoint({ max_retries: 0 })
      await publish('chat.message.completed', { conversationId: 'conv_302' })
      await rx.waitFor(1)
      const [d] = await until(
        'the redirect to fail the delivery',
        async () => {
          const list = await deliveries(ep.id)
          return list[0]?.status === 'failed' ? list : undefined
        },
        WAIT_MS,
      )
      expect(d).toMatchObject({
        attempts: 1,
        response_status: 302,
        error_message: `HTTP 302: redirected to ${rx.url}/elsewhere; webhook deliveries do not follow redirects, register that URL instead`,
      })
      await Bun.sleep(50)
      expect(rx.received.map((r) => r.path)).toEqual(['/legacy'])
      await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
    } finally {
      rx.respond(200)
    }
  })

  test('an inactive endpoint gets no deliveries; the deliveries list is newest first with limit', async () => {
    rx.received.length = 0
    rx.respond(200)
    const ep = await endpoint({ event_types: ['campaign.finished'] })
    for (let i = 0; i < 3; i++) await publish('campaign.finished', { id: `cmp_${i}` })
    await rx.waitFor(3)
    const two = (await legacy('GET', `/webhooks/endpoints/${ep.id}/deliveries?limit=2`)).body.deliveries
    expect(two).toHaveLength(2)
    const bodies = rx.received.map((r) => r.json)
    const byEvent = new Map(bodies.map((b) => [b.id, b.data.id]))
    expect(two.map((x: { event_id: string }) => byEvent.get(x.event_id))).toEqual(['cmp_2', 'cmp_1'])
    await legacy('PATCH', `/webhooks/endpoints/${ep.id}`, { is_active: false })
    await publish('campaign.finished', { id: 'cmp_off' })
    await Bun.sleep(150)
    expect(rx.received).toHaveLength(3)
    await legacy('DELETE', `/webhooks/endpoints/${ep.id}`)
  })
})
