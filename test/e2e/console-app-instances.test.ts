/**
 * The console app's live stream across instances (Redis): a ticket bought on one instance opens a
 * stream on the other, once; a call handled by one instance reaches a page streaming from the other.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createParser } from 'eventsource-parser'
import { chunks } from '../support/body'
import { type InstancePair, startInstancePair } from '../support/instances'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('the console app on two instances', () => {
  let pair: InstancePair
  beforeAll(async () => {
    pair = await startInstancePair()
  }, 30_000)
  afterAll(() => pair?.stop())

  test('a ticket from A opens a stream on B once; a call placed through A shows on B’s stream', async () => {
    const { a, b } = pair
    const dev = await a.developer({ plan: 'scale' })
    const agent = (await a.agent(dev.key, { name: 'Ring', voice: { answersCalls: true } })).id
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550500', source: 'rented', agent })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550501' })).status).toBe(201)
    expect((await a.console('PUT', '/sandbox/phones/%2B14155550501', { pickup: 'answer', ringMs: 1000, lines: [], hangupAfterMs: 5000 })).status).toBe(200)

    const { stream } = (await a.console('POST', '/app/tickets', { workspace: dev.id })).body
    const controller = new AbortController()
    const res = await fetch(`${b.url}${stream}`, { signal: controller.signal })
    expect(res.status).toBe(200)
    // Spent on B: A refuses it too.
    expect((await fetch(`${a.url}${stream}`)).status).toBe(401)
    const events: { event: string; data: any }[] = []
    const parser = createParser({ onEvent: (m) => void events.push({ event: m.event ?? 'message', data: JSON.parse(m.data) }) })
    const decoder = new TextDecoder()
    void (async () => {
      try {
        for await (const chunk of chunks(res)) parser.feed(decoder.decode(chunk, { stream: true }))
      } catch {
        /* closed by the test */
      }
    })()
    await until(
      'ready',
      async () => events.some((e) => e.event === 'ready'),
      (v) => v,
    )
    const id = (await a.api('POST', '/calls', { key: dev.key, body: { to: '+14155550501', purpose: 'Hello from A.' } })).body.id
    await until(
      'the call ringing, seen on B',
      async () => events.some((e) => e.event === 'call' && e.data.call.id === id && e.data.call.status === 'ringing'),
      (v) => v,
      5_000,
    )
    await until(
      'its chart move, seen on B',
      async () => events.some((e) => e.event === 'actor' && e.data.id === `call:${id}`),
      (v) => v,
      5_000,
    )
    controller.abort()
  }, 30_000)
})
