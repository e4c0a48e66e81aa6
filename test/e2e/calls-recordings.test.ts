/**
 * Call recordings end to end (docs/spec.md Recording rules): the link answers 404 while the audio is
 * still arriving (`ready: false`), plays once ready, and stops working when the plan deletes the
 * recording — 30 days on pay-as-you-go, 75 on Scale — when the retention sweep, which runs on the
 * service clock, removes the file.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const DAY = 86_400_000
let s: TestServer

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
})
afterAll(() => s?.stop())

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const play = (url: string) => fetch(url.replace(/^https?:\/\/[^/]+/, s.url))

/** A recorded call on `plan`, ended by DELETE once its recording has started. */
async function recordedCall(plan: 'payg' | 'scale', number: string, contact: string) {
  const dev = await s.developer({ plan, name: `Recorded ${plan}` })
  if (plan === 'payg') expect((await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 100_000_000 })).status).toBeLessThan(300)
  const agent = await s.agent(dev.key, { name: 'Recorder', voice: { answersCalls: true, recordCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(contact)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })).status).toBe(200)
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: 'Hello, this call is recorded.' } })
  expect(placed.status).toBe(202)
  const id = placed.body.id as string
  const get = () => s.api('GET', `/calls/${id}`, { key: dev.key })
  // The recording starts with the media stream: a link, not ready yet.
  const live = await until('recording under way', get, (r) => r.body.recording !== null, 10_000)
  expect(live.body.status).toBe('connected')
  expect(live.body.recording.ready).toBe(false)
  const early = await play(live.body.recording.url)
  expect(early.status).toBe(404)
  expect(await early.json()).toMatchObject({ error: { code: 'not_found' } })
  // Let the purpose be spoken into it, then end the call.
  await until('the purpose spoken', get, (r) => r.body.transcript.length > 0, 15_000)
  expect((await s.api('DELETE', `/calls/${id}`, { key: dev.key })).status).toBe(202)
  const done = await until('recording ready', get, (r) => r.body.recording?.ready === true && r.body.analysedAt !== null, 15_000)
  // The link stays the same; it now plays.
  expect(done.body.recording.url).toBe(live.body.recording.url)
  const wav = await play(done.body.recording.url)
  expect(wav.status).toBe(200)
  expect(wav.headers.get('content-type')).toBe('audio/wav')
  expect(new TextDecoder().decode(new Uint8Array(await wav.arrayBuffer()).subarray(0, 4))).toBe('RIFF')
  return { id, recording: done.body.recording as { url: string; expiresAt: string }, endedAt: done.body.endedAt as string, file: join(s.dataDir, 'recordings', `${id}-1.wav`) }
}

test('404 before ready; kept 30 days on pay-as-you-go and 75 on Scale, then the link is dead and the sweep deletes the file', async () => {
  const payg = await recordedCall('payg', '+14155553500', '+14155553501')
  const scale = await recordedCall('scale', '+14155553510', '+14155553511')
  // expiresAt is the retention counted from when the recording was finished (the call's end here).
  expect(Date.parse(payg.recording.expiresAt) - Date.parse(payg.endedAt)).toBe(30 * DAY)
  expect(Date.parse(scale.recording.expiresAt) - Date.parse(scale.endedAt)).toBe(75 * DAY)
  for (const r of [payg, scale]) expect(existsSync(r.file)).toBe(true)

  await advance(29 * DAY)
  for (const r of [payg, scale]) {
    expect((await play(r.recording.url)).status).toBe(200)
    expect(existsSync(r.file)).toBe(true)
  }

  await advance(2 * DAY)
  expect((await play(payg.recording.url)).status).toBe(404)
  await until(
    'the pay-as-you-go recording deleted',
    async () => existsSync(payg.file),
    (there) => !there,
  )
  expect((await play(scale.recording.url)).status).toBe(200)
  expect(existsSync(scale.file)).toBe(true)

  await advance(45 * DAY)
  expect((await play(scale.recording.url)).status).toBe(404)
  await until(
    'the Scale recording deleted',
    async () => existsSync(scale.file),
    (there) => !there,
  )
}, 90_000)
