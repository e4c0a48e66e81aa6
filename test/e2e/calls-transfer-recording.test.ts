/**
 * A recorded call that is transferred (docs/api/calls.md "Transfer", the record): the recording
 * holds what passed through us — the caller with the agent — and is finished at the hand-off,
 * while the call is still connected. After a cold `<Dial>`-style hand-off or a warm join nothing
 * of the person's conversation reaches us, so the file does not grow and the person's words are
 * not in the transcript, though the call talks on for another 30 s.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
const COLD = '+14155553677'
const WARM = '+14155553678'

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale' })
  const agent = await s.agent(dev.key, {
    name: 'Recorder',
    voice: { answersCalls: true, recordCalls: true },
    transfers: [
      { name: 'Billing', phoneNumber: COLD, whenToUse: 'bills', mode: 'cold' },
      { name: 'Manager', phoneNumber: WARM, whenToUse: 'complaints', mode: 'warm' },
    ],
  })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553600', source: 'rented', agent: agent.id })).status).toBe(201)
  for (const [phone, line] of [
    [COLD, 'Billing here, I can help with that.'],
    [WARM, 'Manager here, I can help with that.'],
  ] as const)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, lines: [line], hangupAfterMs: 30_000 })).status).toBe(200)
})
afterAll(() => s?.stop())

const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })
const wav = async (url: string) => new Uint8Array(await (await fetch(url.replace(/^https?:\/\/[^/]+/, s.url))).arrayBuffer())

for (const [destination, phone] of [
  ['Billing', '+14155553601'],
  ['Manager', '+14155553602'],
] as const) {
  test(`${destination === 'Billing' ? 'cold' : 'warm'}: the recording is finished at the hand-off and holds only what we carried`, async () => {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
    const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: phone, purpose: 'Hello, this call is recorded.' } })).body.id as string
    const live = await until(
      'the agent spoke, recording',
      () => call(id),
      (r) => r.body.transcript.length > 0 && r.body.recording !== null,
      20_000,
    )
    expect(live.body.recording.ready).toBe(false)
    expect((await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination } })).status).toBe(202)
    // Handed off: the call talks on with the person, and the recording is already done.
    const handed = await until(
      'recording ready at the hand-off',
      () => call(id),
      (r) => r.body.transfer?.answeredAt != null && r.body.recording?.ready === true,
      20_000,
    )
    expect(handed.body.status).toBe('connected')
    const atHandOff = await wav(handed.body.recording.url)
    expect(new TextDecoder().decode(atHandOff.subarray(0, 4))).toBe('RIFF')
    expect(atHandOff.length).toBeGreaterThan(44)

    await s.console('POST', '/clock/advance', { ms: 30_000 })
    const done = await until(
      'ended',
      () => call(id),
      (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
      20_000,
    )
    expect(done.body.transfer).toMatchObject({ to: destination, outcome: 'answered', seconds: 30 })
    // Nothing after the hand-off was carried: the same file, and the person's words are not in the transcript.
    expect(done.body.recording.url).toBe(handed.body.recording.url)
    expect(await wav(done.body.recording.url)).toEqual(atHandOff)
    expect(done.body.transcript.some((l: any) => l.text.includes('I can help with that'))).toBe(false)
  }, 60_000)
}
