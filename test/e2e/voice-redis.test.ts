/**
 * Two instances on one Redis: the call's actor and the sandbox network on instance A, its media
 * socket on instance B. B's pipeline reads the call from the shared store, reports to the actor
 * through the runtime (forwarded to A), and a DELETE on A reaches B's socket over Redis pub/sub.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { type InstancePair, startInstancePair } from '../support/instances'
import type { TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('a call whose media lands on another instance', () => {
  let pair: InstancePair
  let a: TestServer
  let b: TestServer
  beforeAll(async () => {
    pair = await startInstancePair({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
    ;({ a, b } = pair)
  })
  afterAll(() => pair?.stop())

  test("the conversation runs on B while A holds the call; DELETE on A ends B's stream", async () => {
    const dev = await a.developer({ plan: 'scale' })
    const agent = (await a.agent(dev.key, { name: 'Two', voice: { answersCalls: true } })).id
    expect((await a.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Opening hours\n\nWe are open from 9 am to 5 pm every day.', title: 'Hours' } })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550600', source: 'rented', agent })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550601' })).status).toBe(201)
    expect((await a.console('PUT', '/sandbox/phones/%2B14155550601', { pickup: 'answer', ringMs: 0, lines: ['When are you open?'], hangupAfterMs: null })).status).toBe(200)
    // A's callees stream into B; B's scripted STT reads what A's callee says.
    const onA = a.server.services.of(callsFeature)
    const onB = b.server.services.of(callsFeature)
    const original = onA.sandbox.detachMedia()
    if (!original) throw new Error("A's sandbox network has no media hook-up")
    onA.sandbox.attachMedia({ ...original, baseUrl: () => b.server.services.listening.url, scripts: onB.scripts })

    const placed = await a.api('POST', '/calls', { key: dev.key, body: { to: '+14155550601', purpose: 'Hello, calling from two instances.' } })
    const id = placed.body.id
    const row = await until(
      'connected',
      () => a.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
    )
    const callee = await until(
      'callee on the line',
      async () => onA.sandbox.callee(row.body.callRef),
      (c) => !!c,
    )
    const talked = await until(
      'answered',
      async () => (await b.api('GET', `/calls/${id}`, { key: dev.key })).body,
      (c) => !!c.transcript[2]?.text.includes('9 am to 5 pm'),
      30_000,
    )
    expect(onB.media.pipeline(id)).not.toBeNull()
    expect(onA.media.pipeline(id)).toBeNull()
    expect(talked.transcript.slice(0, 3).map((l: any) => l.speaker)).toEqual(['agent', 'customer', 'agent'])
    expect(talked.transcript[2].text).toContain('9 am to 5 pm')

    expect((await a.api('DELETE', `/calls/${id}`, { key: dev.key })).status).toBe(202)
    await until(
      'B closed the stream',
      async () => onB.media.pipeline(id),
      (p) => p === null,
      5_000,
    )
    const ended = await until(
      'completed',
      () => b.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
      10_000,
    )
    expect(ended.body.hangup).toBe('cancelled')
    expect(ended.body.transcript.length).toBeGreaterThanOrEqual(3)
    expect(callee!.log.said).toEqual(['When are you open?'])
  }, 60_000)
})
