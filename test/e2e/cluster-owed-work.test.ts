/**
 * Work a dead instance owed is finished by another, with no restart (events/owed-work.ts): two
 * instances on one Redis and one store; A stores customer messages and owes v1 deliveries queued
 * behind a slow receiver, and is killed with kill -9 as its 8th answer is about to begin. B, which
 * never saw those requests, answers every message and delivers every event once A's presence lease
 * (20 s) has lapsed.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { CLUSTER_POLL_MS, type Cluster, startCluster } from '../support/cluster'
import { type SlowReceiver, startSlowReceiver } from '../support/slow-receiver'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

const MESSAGES = 8
// Slow enough that A dies with deliveries still queued in its lane.
const RECEIVER_DELAY_MS = 800

describeWithRedis('a dead instance’s owed work', () => {
  let cluster: Cluster
  let receiver: Server<unknown>
  let hits: SlowReceiver['hits'] = []

  beforeAll(async () => {
    ;({ server: receiver, hits } = startSlowReceiver(RECEIVER_DELAY_MS))
    cluster = await startCluster({ env: { ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }, a: { SERVICE_CRASH_AT: `answer.started@${MESSAGES}` } })
  })
  afterAll(async () => {
    await cluster?.stop()
    receiver?.stop(true)
  })

  test('B answers the messages A stored and delivers the events A owed', async () => {
    const { a, b } = cluster
    const dev = (await a.console('POST', '/workspaces', { name: 'Two instances', plan: 'scale' })).body
    const agent = (await a.call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body.id
    expect((await a.call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550910', source: 'rented', channel: 'chatapp', agent, externalAgents: true })).status).toBe(201)
    expect((await a.call('POST', '/api/v1/webhooks', dev.key, { agent, url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.received'] })).status).toBe(201)
    // Messages to the external number: their message.received deliveries queue behind the receiver.
    const external = await Promise.all(
      Array.from({ length: 24 }, (_, i) => a.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: `+1415555${3000 + i}`, to: '+14155550910', text: 'Hi' })),
    )
    for (const r of external) expect(r.status).toBe(201)
    // Messages the agent answers: A dies as the last one's answer is about to begin.
    await Promise.all(
      Array.from({ length: MESSAGES }, (_, i) =>
        a.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: `+1415555${4000 + i}`, to: '+14155550900', text: 'Are you open?' }).catch(() => null),
      ),
    )
    await until(
      'A to die',
      async () => a.alive(),
      (alive) => !alive,
      { withinMs: 10_000, everyMs: CLUSTER_POLL_MS },
    )

    // Read at most once a second: the conversation reads have a per-key rate limit.
    const answered = async () => {
      await Bun.sleep(1_000)
      const listed = (await b.call('GET', '/api/v1/conversations?channel=chatapp&limit=100', dev.key)).body?.items as { id: string; customer: { phone: string } }[] | undefined
      let n = 0
      for (const c of (listed ?? []).filter((c) => c.customer.phone.startsWith('+14155554'))) {
        const messages = (await b.call('GET', `/api/v1/conversations/${c.id}/messages`, dev.key)).body?.items as { author: string }[] | undefined
        if (messages?.some((m) => m.author === 'agent')) n++
      }
      return n
    }
    // Within A's presence lease (20 s) and one look (5 s), with margin for a loaded machine.
    await until('B to answer every message A stored', answered, (n) => n === MESSAGES, { withinMs: 60_000, everyMs: CLUSTER_POLL_MS })
    const externalIds = external.map((r) => r.body.messageId as string)
    await until(
      'every owed delivery',
      async () => externalIds.filter((id) => hits.some((h) => h.messageId === id)).length,
      (n) => n === externalIds.length,
      { withinMs: 60_000, everyMs: CLUSTER_POLL_MS },
    )
    // One event id per message however often it arrived.
    const ids = new Map<string, Set<string>>()
    for (const h of hits) ids.set(h.messageId, (ids.get(h.messageId) ?? new Set()).add(h.eventId))
    for (const set of ids.values()) expect(set.size).toBe(1)
  }, 150_000)
})
