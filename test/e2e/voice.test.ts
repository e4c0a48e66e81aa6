/**
 * A call's voice end to end: the running server, the sandbox network, and its callee as a real
 * Twilio-protocol WebSocket client of /media. The agent speaks the purpose, the callee asks a
 * question, the agent answers from a pasted document (the offline local model), the callee cuts
 * into the answer and playback is cleared at once, the transcript keeps only what was heard, and
 * after the callee hangs up the call has its transcript, summary, fields and recording.
 *
 * Speech engines: the sandbox's doubles on the agent's side (scripted transcripts, formant voice),
 * so the words are deterministic; the callee's voice is espeak-ng where installed. Silero VAD runs
 * for real on that audio. The same call with local engines only lives in voice-local.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Parking

Free parking for customers is behind the shop, entrance on Mill Lane.`

let s: TestServer

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
})
afterAll(() => s?.stop())

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })

async function phoneAgent(number: string, contact: string, extra: Record<string, unknown> = {}) {
  const dev = await s.developer({ plan: 'scale', name: 'Voice' })
  const agent = (await s.agent(dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true }, ...extra })).id
  expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
  return { ...dev, agent }
}

const FULL_HOURS = 'We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.'

/** A call to a sandbox callee who says `lines`; resolves once its callee is on the line. */
async function callWithLines(agentNumber: string, contact: string, lines: string[]) {
  const dev = await phoneAgent(agentNumber, contact)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(contact)}`, { pickup: 'answer', ringMs: 0, lines, hangupAfterMs: 60 * SEC })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: 'Hi, this is Bean There.' } })).body.id as string
  const { sandbox } = s.server.services.of((await import('../../src/features/calls')).callsFeature)
  const row = await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  const callee = (await until(
    'callee on the line',
    async () => sandbox.callee(row.body.callRef),
    (c) => !!c,
  ))!
  const call = async () => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body
  return { callee, call }
}

describe('a sandbox call through the media bridge', () => {
  test('purpose first, an answer from knowledge, a barge-in cleared at once, heard-only transcript, results after', async () => {
    const dev = await phoneAgent('+14155550800', '+14155550801')
    const lines = ['What time do you open on Saturday?', '> Sorry, where do customers park?', 'My name is Priya.']
    expect((await s.console('PUT', '/sandbox/phones/%2B14155550801', { pickup: 'answer', ringMs: 0, lines, hangupAfterMs: 60 * SEC })).status).toBe(200)
    const placed = await s.api('POST', '/calls', {
      key: dev.key,
      body: { to: '+14155550801', purpose: 'Hi, this is Bean There calling about your order.', extract: [{ name: 'name', type: 'text', description: "the caller's name" }] },
    })
    expect(placed.status).toBe(202)
    const id = placed.body.id
    const { sandbox } = s.server.services.of((await import('../../src/features/calls')).callsFeature)
    const row = await until(
      'connected',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
    )
    const callee = await until(
      'callee on the line',
      async () => sandbox.callee(row.body.callRef),
      (c) => !!c,
    )
    // The pipeline's state shows on the call's actor in the console while the call is live.
    const actor = await until(
      'the pipeline runs',
      () => s.console('GET', `/actors/call:${id}`),
      (r) => r.status === 200 && r.body.pipeline !== null,
    )
    expect(['opening', 'listening', 'callerSpeaking', 'maybeDone', 'thinking', 'speaking', 'interrupted', 'resuming']).toContain(actor.body.pipeline.state)

    // The callee says both lines; the second cuts into the agent's answer.
    await until(
      'both lines said and answered',
      async () => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body,
      (c) => c.transcript.filter((l: any) => l.speaker === 'agent').length >= 4,
      60_000,
    )
    expect(callee!.log.said).toEqual(['What time do you open on Saturday?', 'Sorry, where do customers park?', 'My name is Priya.'])
    expect(callee!.log.clears).toBe(1) // one interruption, one clear

    const live = (await s.api('GET', `/calls/${id}`, { key: dev.key })).body
    const t = live.transcript.map((l: any) => [l.speaker, l.text])
    expect(t[0]).toEqual(['agent', 'Hi, this is Bean There calling about your order.'])
    expect(t[1]).toEqual(['customer', 'What time do you open on Saturday?'])
    // The answer was cut where the caller interrupted: what is kept is a true prefix of the full reply.
    const full = FULL_HOURS
    const cut = t[2]
    expect(cut[0]).toBe('agent')
    expect(cut[1].length).toBeGreaterThan(0)
    expect(cut[1].length).toBeLessThan(full.length)
    expect(full.startsWith(cut[1])).toBe(true)
    // The agent's memory holds the cut reply too, not what the model wrote.
    const rowDoc = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] }).then((c) => c.get(`${id}:1`))
    const memory = await s.server.services.of((await import('../../src/features/conversations')).conversationsFeature).conversations.history(rowDoc.conversationId, 20)
    const agentTurns = memory.filter((m) => m.author === 'agent').map((m) => (m.parts[0] as { text: string }).text)
    expect(agentTurns[1]).toBe(cut[1])
    // Cleared while the answer was still playing: the `clear` reached the callee during the
    // interruption (not after the answer ran out), and the kept text is a true prefix (above).
    const barge = callee!.log.interruptions[0]!
    expect(barge.kind).toBe('interrupt')
    expect(barge.clearedAfterMs).not.toBeNull()
    expect(t[3]).toEqual(['customer', 'Sorry, where do customers park?'])
    expect(t[4][0]).toBe('agent')
    expect(t[4][1]).toContain('Mill Lane')
    // The chart says why it is where it is (after three answered turns, never empty).
    const watched = await s.console('GET', `/actors/call:${id}`)
    expect(watched.body.pipeline.why).toBeString()
    expect(watched.body.pipeline.why.length).toBeGreaterThan(0)

    // The callee hangs up (service clock): completed, analysed, recorded.
    await advance(61 * SEC)
    const done = await until(
      'analysed',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.analysedAt !== null && r.body.recording?.ready === true,
      20_000,
    )
    expect(done.body).toMatchObject({ status: 'completed', hangup: 'answered' })
    expect(done.body.summary).toBeString()
    expect(done.body.fields).toEqual({ name: 'Priya' })
    expect(done.body.latency.turns).toBe(3) // one per line the callee said
    expect(done.body.latency.toFirstAudioMs.p50).toBeGreaterThan(0)
    expect(done.body.latency.toFirstHeardMs.p50).toBeGreaterThanOrEqual(done.body.latency.toFirstAudioMs.p50)
    const wav = await fetch(done.body.recording.url.replace(/^https?:\/\/[^/]+/, s.url))
    expect(wav.status).toBe(200)
    expect(wav.headers.get('content-type')).toBe('audio/wav')
    const bytes = new Uint8Array(await wav.arrayBuffer())
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF')
    // Several seconds of audio at 8 kHz, 16-bit.
    expect(bytes.length).toBeGreaterThan(8000 * 2 * 5)
  }, 90_000)

  test('a wordless noise over the agent stops it, then it picks its sentence up again', async () => {
    const { callee, call } = await callWithLines('+14155550810', '+14155550811', ['What time do you open on Saturday?', '~'])
    // Agent lines are written as they are heard: wait for the resumed one to reach the sentence's end.
    const resumedWhole = (c: any) => {
      const agent = c.transcript.filter((l: any) => l.speaker === 'agent')
      return agent.length >= 3 && FULL_HOURS.endsWith(agent[2].text.replace(/ \(Source: Shop FAQ\)$/, ''))
    }
    const done = await until('cut, then resumed', call, resumedWhole, 45_000)
    expect(callee.log.interruptions[0]?.kind).toBe('noise')
    expect(callee.log.clears).toBe(1)
    const agent = done.transcript.filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)
    const full = FULL_HOURS
    // The cut part and the resumed rest together say the sentence; no customer line came between.
    expect(full.startsWith(agent[1])).toBe(true)
    expect(full.endsWith(agent[2].replace(/ \(Source: Shop FAQ\)$/, ''))).toBe(true)
    expect(done.transcript.filter((l: any) => l.speaker === 'customer')).toHaveLength(1)
    await advance(61 * SEC)
  }, 90_000)

  test('an "okay" said over the agent does not take the turn: the answer is heard whole', async () => {
    const { callee, call } = await callWithLines('+14155550820', '+14155550821', ['What time do you open on Saturday?', '> Okay.'])
    const full = FULL_HOURS
    const done = await until(
      'the answer heard',
      call,
      (c) =>
        c.transcript
          .filter((l: any) => l.speaker === 'agent')
          .map((l: any) => l.text)
          .join(' ')
          .includes('2 pm on Sundays'),
      45_000,
    )
    expect(callee.log.said).toEqual(['What time do you open on Saturday?', 'Okay.'])
    // Only the question is a customer turn; the agent's answer is all there (whole, or cut and resumed).
    expect(done.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)).toEqual(['What time do you open on Saturday?'])
    const answer = done.transcript
      .filter((l: any) => l.speaker === 'agent')
      .slice(1)
      .map((l: any) => l.text)
      .join(' ')
    expect(answer.replace(/ \(Source: Shop FAQ\)$/, '')).toBe(full)
    await advance(61 * SEC)
  }, 90_000)
})
