/**
 * The same call with local engines only — no keys, no network: espeak-ng speaks for the agent
 * (and the callee), pocketsphinx transcribes the callee, Silero hears turns. pocketsphinx is weak
 * on phone audio (docs/api/voice.md gives its word error rate), so this checks the loop, not the words: the
 * callee's turn is transcribed to something, the agent answers it, and the call ends with its
 * transcript, summary and recording.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const SPHINX = systemBinary('pocketsphinx_continuous', 'apt-get install pocketsphinx pocketsphinx-en-us')
const describeLocal = describeNeeding(ESPEAK.path ? SPHINX : ESPEAK)

describeLocal('a call on local engines only', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'pocketsphinx', TTS_PROVIDER: 'espeak' })
  })
  afterAll(() => s?.stop())

  test('the purpose is spoken, the callee is transcribed and answered, the call ends with its results', async () => {
    const dev = await s.developer({ plan: 'scale', name: 'Local' })
    const agent = (await s.agent(dev.key, { name: 'Local', voice: { answersCalls: true, recordCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550901' })).status).toBe(201)
    expect((await s.console('PUT', '/sandbox/phones/%2B14155550901', { pickup: 'answer', ringMs: 0, lines: ['What time do you open on Saturday?'], hangupAfterMs: 60_000 })).status).toBe(200)
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550901', purpose: 'Hello, this is a quick test call.' } })
    expect(placed.status).toBe(202)
    const id = placed.body.id
    const talk = await until(
      'the callee answered and the agent replied',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.transcript.length >= 3,
      45_000,
    )
    const t = talk.body.transcript
    expect(t[0]).toMatchObject({ speaker: 'agent', text: 'Hello, this is a quick test call.' })
    expect(t[1].speaker).toBe('customer')
    expect(t[1].text.length).toBeGreaterThan(0)
    expect(t[2].speaker).toBe('agent')
    await s.console('POST', '/clock/advance', { ms: 61_000 })
    const done = await until(
      'analysed and recorded',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.analysedAt !== null && r.body.recording?.ready === true,
      20_000,
    )
    expect(done.body.status).toBe('completed')
    expect(done.body.summary).toBeString()
  }, 90_000)
})
