/**
 * Webhook order: a call's events reach one endpoint in the order they were dispatched (its
 * `call.completed` before its `call.analysed`), whatever holds the first one up: a receiver that
 * has not answered it yet, a legacy retry, a dead instance's delivery waiting to be taken over, or
 * a crash between recording the event and dispatching it. Another call's events to the same
 * endpoint go out meanwhile: that arrival is also the proof that the held one was not sent. Where
 * the process holds its store alone, what is owed is read from memory once the boot took over an
 * earlier life's deliveries; where others may write it (SQLITE_LOCKING=shared), from the store.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type EventType, subjectOf } from '../../src/events/catalogue'
import { turnKey } from '../../src/features/webhooks/subject-turns'
import { owedV1Id } from '../../src/features/webhooks/v1-delivery'
import { type Received, type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let server: TestServer
let dev: { id: string; key: string }
const receivers: Receiver[] = []

const SEC = 1000
// A dead instance's deliveries are taken over at the survivor's next look (every 5 s,
// events/owed-work.ts), up to 5 s after the test writes them; twice that bounds the wait.
const TAKEOVER_WAIT_MS = 10_000

beforeAll(async () => {
  server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  dev = await server.developer({ name: 'Order dev', plan: 'pro' })
})

afterAll(async () => {
  await server?.stop()
  for (const rx of receivers) await rx.stop()
})

/** A fresh agent with a v1 webhook on every event, and its own receiver. */
async function hooked(): Promise<{ agent: string; hook: string; rx: Receiver }> {
  const rx = startReceiver()
  receivers.push(rx)
  const agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id as string
  const res = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `${rx.url}/hook` } })
  expect(res.status).toBe(201)
  return { agent, hook: res.body.id, rx }
}

const publish = (agent: string, type: EventType, callId: string, opts: { id?: string } = {}) =>
  server.server.services.bus.publish({ type, workspaceId: dev.id, agentId: agent, data: { id: callId } }, opts)

/** What a receiver got, as `<type> <call>` in arrival order (v1 and legacy bodies alike). */
const seen = (rx: Receiver) => rx.received.map((r: Received) => `${r.json.event ?? r.json.event_type} ${r.json.data.id}`)
const arrived = (rx: Receiver, what: string, n = 1) => until(`${what} at the receiver`, () => seen(rx).filter((s) => s === what).length >= n, TAKEOVER_WAIT_MS)

describe('v1 webhooks: one call, one endpoint, in order', () => {
  test("call.analysed waits while the receiver has not answered the same call's call.completed; other calls go on", async () => {
    const { agent, rx } = await hooked()
    const release = rx.hold()
    await publish(agent, 'call.completed', 'call_a1')
    await arrived(rx, 'call.completed call_a1')
    await publish(agent, 'call.analysed', 'call_a1')
    await publish(agent, 'call.completed', 'call_b1')
    // Published after call_a1's analysis, to the same endpoint: once it is here, that one was held back.
    await arrived(rx, 'call.completed call_b1')
    expect(seen(rx)).not.toContain('call.analysed call_a1')
    release()
    await arrived(rx, 'call.analysed call_a1')
    expect(seen(rx).filter((s) => s.endsWith('call_a1'))).toEqual(['call.completed call_a1', 'call.analysed call_a1'])
  })

  test('call.completed recorded but not dispatched before a crash is dispatched when its call hands it over again, before call.analysed', async () => {
    const { agent, rx } = await hooked()
    const { bus } = server.server.services
    // The crash left the event recorded and undispatched, and still in the call actor's outbox.
    const completed = await bus.record({ type: 'call.completed', workspaceId: dev.id, agentId: agent, data: { id: 'call_r1' } })
    // After the restart the call hands its outbox over again (same id), then emits its analysis.
    await publish(agent, 'call.completed', 'call_r1', { id: completed.id })
    await publish(agent, 'call.analysed', 'call_r1')
    await arrived(rx, 'call.analysed call_r1')
    expect(seen(rx)).toEqual(['call.completed call_r1', 'call.analysed call_r1'])
  })
})

describe('v1 webhooks beside other instances writing the store (SQLITE_LOCKING=shared)', () => {
  let own: { server: TestServer; dev: { id: string; key: string } }
  beforeAll(async () => {
    own = { server, dev }
    // Another process may owe deliveries in this store: which are owed is read from it.
    server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', SQLITE_LOCKING: 'shared' })
    dev = await server.developer({ name: 'Shared dev', plan: 'pro' })
  })
  afterAll(async () => {
    await server.stop()
    ;({ server, dev } = own)
  })

  test("a dead instance's call.completed still owed holds the call.analysed dispatched here until it is taken over and sent", async () => {
    const { agent, hook, rx } = await hooked()
    const { bus, store } = server.server.services
    // What an instance killed after dispatching call.completed leaves: the event marked dispatched,
    // its delivery owed under that instance's name, and that instance registered with no lease.
    const completed = await bus.record({ type: 'call.completed', workspaceId: dev.id, agentId: agent, data: { id: 'call_d1' } })
    await bus.events.update(completed.id, { dispatched: true })
    const owners = await store.collection({ name: 'v1_webhook_deliveries_owners', indexes: [] })
    const owed = await store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
    await owners.upsert({ id: 'inst_killed', startedAt: Date.now() })
    const key = turnKey(hook, subjectOf(completed)!)
    await owed.insert({ id: owedV1Id(completed.id, hook), eventId: completed.id, webhookId: hook, createdAt: completed.createdAt, key, after: [], owner: 'inst_killed' })
    await publish(agent, 'call.analysed', 'call_d1')
    await arrived(rx, 'call.analysed call_d1')
    expect(seen(rx)).toEqual(['call.completed call_d1', 'call.analysed call_d1'])
  })
})

describe('v1 webhooks on a store this process holds alone: what is owed, from memory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-order-'))
  const ENV = { ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }
  let own: { server: TestServer; dev: { id: string; key: string } }
  beforeAll(async () => {
    own = { server, dev }
    server = await startTestServer(ENV, dir)
    dev = await server.developer({ name: 'Alone dev', plan: 'pro' })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
    ;({ server, dev } = own)
  })

  /** Counts the reads of owed deliveries by key (a dispatch asking the store what is owed). */
  async function owedReads() {
    const owed = await server.server.services.store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
    const find = owed.find
    const reads = {
      byKey: 0,
      stop: () => {
        owed.find = find
      },
    }
    owed.find = (filter, options) => {
      if ('key' in filter) reads.byKey++
      return find.call(owed, filter, options)
    }
    return reads
  }

  test('dispatching asks the store for no owed delivery once the boot took over what was owed; the order holds', async () => {
    const { agent, rx } = await hooked()
    const reads = await owedReads()
    try {
      const release = rx.hold()
      await publish(agent, 'call.completed', 'call_m1')
      await arrived(rx, 'call.completed call_m1')
      await publish(agent, 'call.analysed', 'call_m1')
      await publish(agent, 'call.completed', 'call_m2')
      await arrived(rx, 'call.completed call_m2')
      expect(seen(rx)).not.toContain('call.analysed call_m1')
      release()
      await arrived(rx, 'call.analysed call_m1')
      expect(seen(rx).filter((s) => s.endsWith('call_m1'))).toEqual(['call.completed call_m1', 'call.analysed call_m1'])
    } finally {
      reads.stop()
    }
    expect(reads.byKey).toBe(0)
  })

  test("an earlier life's call.completed still owed is taken over at boot and holds the call.analysed dispatched after it", async () => {
    const { agent, hook, rx } = await hooked()
    const { bus, store } = server.server.services
    // What an earlier life killed after dispatching call.completed leaves: the event marked
    // dispatched, its delivery owed under that life's name, registered with no lease.
    const completed = await bus.record({ type: 'call.completed', workspaceId: dev.id, agentId: agent, data: { id: 'call_k1' } })
    await bus.events.update(completed.id, { dispatched: true })
    const owners = await store.collection({ name: 'v1_webhook_deliveries_owners', indexes: [] })
    const owed = await store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
    await owners.upsert({ id: 'inst_killed', startedAt: Date.now() })
    await owed.insert({
      id: owedV1Id(completed.id, hook),
      eventId: completed.id,
      webhookId: hook,
      createdAt: completed.createdAt,
      key: turnKey(hook, subjectOf(completed)!),
      after: [],
      owner: 'inst_killed',
    })
    await server.stop()
    const release = rx.hold()
    server = await startTestServer(ENV, dir)
    const reads = await owedReads()
    await arrived(rx, 'call.completed call_k1')
    await publish(agent, 'call.analysed', 'call_k1')
    await publish(agent, 'call.completed', 'call_k2')
    await arrived(rx, 'call.completed call_k2')
    expect(seen(rx)).not.toContain('call.analysed call_k1')
    release()
    await arrived(rx, 'call.analysed call_k1')
    expect(seen(rx).filter((s) => s.endsWith('call_k1'))).toEqual(['call.completed call_k1', 'call.analysed call_k1'])
    reads.stop()
    expect(reads.byKey).toBe(0)
  })
})

describe('legacy endpoints: retries keep the order', () => {
  test("call.analysed waits while the same call's call.completed is retrying, then follows its retry", async () => {
    const rx = startReceiver()
    receivers.push(rx)
    const agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id as string
    const legacy = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(
        (r) => r.json() as Promise<any>,
      )
    const agentNumber = (await legacy('GET', `/agents/${agent}/status`)).agent_id
    const endpoint = (await legacy('POST', '/webhooks/endpoints', { url: `${rx.url}/legacy`, event_types: ['call.completed', 'call.analysed'], agent_id: agentNumber, max_retries: 2 })).endpoint
    rx.respond(503)
    await publish(agent, 'call.completed', 'call_l1')
    await until('the first attempt failed, a retry booked', async () => (await legacy('GET', `/webhooks/endpoints/${endpoint.id}/deliveries`)).deliveries[0]?.status === 'retrying', WAIT_MS)
    rx.respond(200)
    await publish(agent, 'call.analysed', 'call_l1')
    await publish(agent, 'call.completed', 'call_l2')
    await arrived(rx, 'call.completed call_l2')
    expect(seen(rx)).not.toContain('call.analysed call_l1')
    await server.console('POST', '/clock/advance', { ms: 30 * SEC }) // the first backoff ends: call.completed again
    await arrived(rx, 'call.analysed call_l1')
    expect(seen(rx).filter((s) => s.endsWith('call_l1'))).toEqual(['call.completed call_l1', 'call.completed call_l1', 'call.analysed call_l1'])
  })
})
