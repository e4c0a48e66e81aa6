/**
 * GET /metrics end to end: the console token guards it, and after a missed call, an answered call
 * with a spoken turn, a booked call cancelled before it rang and two webhook deliveries (one
 * refused), the scrape counts exactly those: calls placed and ended by outcome, calls live and
 * media sessions while they are, the turn's latency by stage, deliveries by result, actors live
 * and passivated, the durable timer the booked call waited on; and the process's event-loop lag.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Receiver, startReceiver } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const MIN = 60 * SEC
const FAQ = 'Opening hours\n\nWe are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.'

interface Line {
  name: string
  labels: Record<string, string>
  value: number
}

/** The samples of a Prometheus text scrape. */
function parse(text: string): Line[] {
  const lines: Line[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]))
    lines.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return lines
}

/** The value of `name` with exactly `labels`, or undefined when the scrape has no such sample. */
function sampleValue(lines: Line[], name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort())
  return lines.find((l) => l.name === name && JSON.stringify(Object.entries(l.labels).sort()) === want)?.value
}

let s: TestServer
let ok: Receiver
let refusing: Receiver

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100', ALLOW_PRIVATE_WEBHOOK_TARGETS: '1' })
  ok = startReceiver()
  refusing = startReceiver()
  refusing.respond(500)
})
afterAll(async () => {
  await s?.stop()
  await ok?.stop()
  await refusing?.stop()
})

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const phone = (number: string, settings: Record<string, unknown>) => s.console('PUT', `/sandbox/phones/${encodeURIComponent(number)}`, settings)

async function scrape(): Promise<Line[]> {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.consoleToken}` } })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
  return parse(await res.text())
}

describe('GET /metrics', () => {
  test('needs the console token: 401 without it, with a wrong one, or with an API key', async () => {
    const dev = await s.developer()
    for (const authorization of [undefined, 'Bearer not-the-console-token-at-all-000', `Bearer ${dev.key}`]) {
      const res = await fetch(`${s.url}/metrics`, { headers: authorization ? { authorization } : {} })
      expect(res.status).toBe(401)
      expect(await res.text()).not.toContain('agent_platform_')
    }
  })

  test('counts calls, their turns, deliveries, actors and timers exactly', async () => {
    const dev = await s.developer({ plan: 'scale', name: 'Metrics' })
    const agent = (await s.agent(dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true } })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    for (const contact of ['+14155550901', '+14155550902', '+14155550903']) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
    for (const rx of [ok, refusing]) {
      expect((await s.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `${rx.url}/hook`, events: ['call.completed'] } })).status).toBe(201)
    }
    const before = await scrape()
    const timersBefore = sampleValue(before, 'agent_platform_timers_pending')!
    expect(sampleValue(before, 'agent_platform_calls_placed_total', { direction: 'outbound' })).toBe(0)
    expect(sampleValue(before, 'agent_platform_timers_due')).toBe(0)

    // A booked call waits on a durable timer, not ringing; cancelled, it never rang: no placement, no end.
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 2 * 60 * MIN).toISOString()
    const booked = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550903', purpose: 'Reminder', scheduledFor: at } })
    expect(booked.body.status).toBe('scheduled')
    let m = await scrape()
    expect(sampleValue(m, 'agent_platform_timers_pending')).toBe(timersBefore + 1)
    expect(sampleValue(m, 'agent_platform_timers_due')).toBe(0)
    expect((await s.api('DELETE', `/calls/${booked.body.id}`, { key: dev.key })).status).toBe(200)
    expect(sampleValue(await scrape(), 'agent_platform_timers_pending')).toBe(timersBefore)

    // A call that rings 30 s and is not answered: live while ringing, then missed.
    expect((await phone('+14155550901', { pickup: 'no_answer', ringMs: 30 * SEC })).status).toBe(200)
    const missed = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550901', purpose: 'Your order is ready' } })).body.id as string
    await until(
      'ringing',
      () => s.api('GET', `/calls/${missed}`, { key: dev.key }),
      (r) => r.body.status === 'ringing',
    )
    m = await scrape()
    expect(sampleValue(m, 'agent_platform_calls_live', { state: 'ringing' })).toBe(1)
    expect(sampleValue(m, 'agent_platform_calls_placed_total', { direction: 'outbound' })).toBe(1)
    await advance(31 * SEC)
    await until(
      'missed',
      () => s.api('GET', `/calls/${missed}`, { key: dev.key }),
      (r) => r.body.status === 'missed',
    )

    // A call answered: the callee asks one question, the agent answers, the callee hangs up.
    expect((await phone('+14155550902', { pickup: 'answer', ringMs: 0, lines: ['What time do you open on Saturday?'], hangupAfterMs: 60 * SEC })).status).toBe(200)
    const answered = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550902', purpose: 'Hi, this is Bean There.' } })).body.id as string
    const call = async () => (await s.api('GET', `/calls/${answered}`, { key: dev.key })).body
    await until('the question answered', call, (c) => c.transcript.filter((l: { speaker: string }) => l.speaker === 'agent').length >= 2, 45_000)
    m = await scrape()
    expect(sampleValue(m, 'agent_platform_calls_live', { state: 'connected' })).toBe(1)
    expect(sampleValue(m, 'agent_platform_calls_live', { state: 'ringing' })).toBe(0)
    expect(sampleValue(m, 'agent_platform_media_sessions')).toBe(1)
    expect(sampleValue(m, 'agent_platform_calls_placed_total', { direction: 'outbound' })).toBe(2)
    expect(sampleValue(m, 'agent_platform_actors_live', { kind: 'call' })).toBe(3)

    await advance(61 * SEC)
    const done = await until('analysed', call, (c) => c.analysedAt !== null, 20_000)
    expect(done).toMatchObject({ status: 'completed', hangup: 'answered' })
    await ok.waitFor(1)
    await refusing.waitFor(1)
    await until('both deliveries counted', scrape, (l) => sampleValue(l, 'agent_platform_webhook_deliveries_total', { surface: 'v1', result: 'failed' }) === 1)
    await until('the media session closed', scrape, (l) => sampleValue(l, 'agent_platform_media_sessions') === 0)

    m = await scrape()
    expect(sampleValue(m, 'agent_platform_calls_live', { state: 'connected' })).toBe(0)
    expect(sampleValue(m, 'agent_platform_calls_live', { state: 'ringing' })).toBe(0)
    expect(sampleValue(m, 'agent_platform_calls_placed_total', { direction: 'outbound' })).toBe(2)
    expect(sampleValue(m, 'agent_platform_calls_placed_total', { direction: 'inbound' })).toBe(0)
    expect(sampleValue(m, 'agent_platform_calls_ended_total', { status: 'missed', hangup: 'no_answer' })).toBe(1)
    expect(sampleValue(m, 'agent_platform_calls_ended_total', { status: 'completed', hangup: 'answered' })).toBe(1)
    expect(m.filter((l) => l.name === 'agent_platform_calls_ended_total').reduce((n, l) => n + l.value, 0)).toBe(2)
    expect(sampleValue(m, 'agent_platform_webhook_deliveries_total', { surface: 'v1', result: 'delivered' })).toBe(1)
    expect(sampleValue(m, 'agent_platform_webhook_deliveries_total', { surface: 'v1', result: 'failed' })).toBe(1)
    expect(sampleValue(m, 'agent_platform_webhook_deliveries_total', { surface: 'legacy', result: 'delivered' })).toBe(0)

    // One turn (the callee's one line), each stage as GET /calls/{id} reports it.
    const latency = done.latency
    expect(latency.turns).toBe(1)
    for (const [stage, key] of [
      ['endpointing', 'endpointingMs'],
      ['stt', 'sttMs'],
      ['to_first_audio', 'toFirstAudioMs'],
      ['to_first_heard', 'toFirstHeardMs'],
    ] as const) {
      expect([stage, sampleValue(m, 'agent_platform_turn_latency_seconds_count', { stage })]).toEqual([stage, 1])
      expect(sampleValue(m, 'agent_platform_turn_latency_seconds_sum', { stage })!).toBeCloseTo(latency[key].p50 / 1000, 9)
      expect(sampleValue(m, 'agent_platform_turn_latency_seconds_bucket', { stage, le: '+Inf' })).toBe(1)
    }

    // Passivated by hand: the three call actors leave memory, counted once each.
    await s.server.services.runtime.passivateIdle(true)
    m = await scrape()
    expect(sampleValue(m, 'agent_platform_actors_live', { kind: 'call' })).toBe(0)
    expect(sampleValue(m, 'agent_platform_actors_passivated_total', { kind: 'call' })).toBe(3)

    // The store's commits and the process's event-loop lag are there too.
    expect(sampleValue(m, 'agent_platform_store_commit_seconds_count', { store: 'sqlite' })!).toBeGreaterThan(0)
    expect(sampleValue(m, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    expect(sampleValue(m, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0)
  }, 120_000)
})
