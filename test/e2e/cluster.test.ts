/**
 * Two service processes on one Redis and one store, every sandbox media stream crossing over: a
 * call placed on A (its network, its callee) streams into B, where the conversation runs (B's
 * pipeline hears A's callee through the relayed script), and a DELETE sent to B ends it on A's
 * network. voice-redis.test.ts proves the same inside one process; here nothing is shared but
 * Redis, the data directory and the network between them.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CLUSTER_POLL_MS, type Cluster, startCluster } from '../support/cluster'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('two service processes, media crossing over', () => {
  let cluster: Cluster
  beforeAll(async () => {
    cluster = await startCluster({ env: { STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }, mediaTo: 'other' })
  })
  afterAll(() => cluster?.stop())

  test('a call placed on A talks through B, and DELETE on B ends it', async () => {
    const { a, b } = cluster
    const dev = (await a.console('POST', '/workspaces', { name: 'Cluster', plan: 'scale' })).body
    const agent = (await a.call('POST', '/api/v1/agents', dev.key, { name: 'Two', voice: { answersCalls: true, recordCalls: true } })).body.id
    expect((await a.call('POST', `/api/v1/agents/${agent}/knowledge`, dev.key, { text: 'Opening hours\n\nWe are open from 9 am to 5 pm every day.', title: 'Hours' })).status).toBe(201)
    expect((await a.call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', agent })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550701' })).status).toBe(201)
    expect((await a.console('PUT', '/sandbox/phones/%2B14155550701', { pickup: 'answer', ringMs: 0, lines: ['When are you open?'], hangupAfterMs: null })).status).toBe(200)

    const placed = await a.call('POST', '/api/v1/calls', dev.key, { to: '+14155550701', purpose: 'Hello, calling from two instances.' })
    expect(placed.status).toBe(202)
    const id = placed.body.id
    const talked = await until(
      'the agent to answer the callee',
      async () => (await b.call('GET', `/api/v1/calls/${id}`, dev.key)).body,
      (c) => c.transcript?.[2]?.text.includes('9 am to 5 pm'),
      { withinMs: 30_000, everyMs: CLUSTER_POLL_MS },
    )
    expect(talked.status).toBe('connected')
    // A's network carries it (its switch in the reference); B holds the stream and runs the pipeline.
    expect(talked.callRef).toMatch(/^SB[0-9a-z]+-[0-9a-z]{16}$/)
    expect((await b.console('GET', `/actors/call:${id}`)).body.pipeline).not.toBeNull()
    expect((await a.console('GET', `/actors/call:${id}`)).body.pipeline).toBeNull()
    expect(talked.transcript.slice(0, 3).map((l: any) => l.speaker)).toEqual(['agent', 'customer', 'agent'])
    expect(talked.transcript[1].text).toBe('When are you open?')

    expect((await b.call('DELETE', `/api/v1/calls/${id}`, dev.key)).status).toBe(202)
    const ended = await until(
      'the call analysed',
      async () => (await a.call('GET', `/api/v1/calls/${id}`, dev.key)).body,
      (c) => c.analysedAt !== null,
      { withinMs: 15_000, everyMs: CLUSTER_POLL_MS },
    )
    expect(ended).toMatchObject({ status: 'completed', hangup: 'cancelled', attempt: 1 })
    expect(ended.transcript.length).toBeGreaterThanOrEqual(3)
    await until(
      'B to close the stream',
      async () => (await b.console('GET', `/actors/call:${id}`)).body.pipeline,
      (p) => p === null,
      { withinMs: 5_000, everyMs: CLUSTER_POLL_MS },
    )
    // B recorded it; either instance serves the recording (the file storage is shared).
    const done = await until(
      'the recording ready',
      async () => (await a.call('GET', `/api/v1/calls/${id}`, dev.key)).body,
      (c) => c.recording?.ready === true,
      { withinMs: 10_000, everyMs: CLUSTER_POLL_MS },
    )
    const path = new URL(done.recording.url).pathname
    const fromA = await fetch(a.url + path)
    const fromB = await fetch(b.url + path)
    expect([fromA.status, fromB.status]).toEqual([200, 200])
    expect(fromA.headers.get('content-type')).toBe('audio/wav')
    const wav = new Uint8Array(await fromA.arrayBuffer())
    expect(new TextDecoder().decode(wav.subarray(0, 4))).toBe('RIFF')
    expect(wav.length).toBeGreaterThan(8_000)
    expect(new Uint8Array(await fromB.arrayBuffer())).toEqual(wav)
    // One call, one try: nothing was placed again on either instance.
    const listed = (await b.call('GET', '/api/v1/calls?limit=100', dev.key)).body.items
    expect(listed.map((c: any) => c.id)).toEqual([id])
  }, 60_000)
})
