/**
 * BYOK with Deepgram Flux, end to end against the local Flux fake (test/fakes/deepgram-flux.ts):
 * a Deepgram key whose model is `flux-general-en` is verified and lists Flux, a call then hears the
 * caller through `/v2/listen` with the agent's `voice.flux` settings and answers on Flux's end of
 * turn; a wrong key is not saved; Flux failing mid-call fails the call with Deepgram's reason,
 * with no fallback to the service's engines, and the developer is told.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FLUX_FAKE_MODELS, type FluxFake, startFluxFake } from '../fakes/deepgram-flux'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { type SpeechFake, startSpeechFake } from '../fakes/speech-vendors'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const FLUX_KEY = 'dg-byok-flux-key-FFFF5555'
const OPENAI_KEY = 'sk-openai-byok-flux-key-OOOO6666'
const ELEVEN_KEY = 'xi-byok-flux-key-EEEE7777'
/** A voice the ElevenLabs fake offers. */
const VOICE = 'JBFqnCBsd6RMkjVDRZzb'
const QUESTION = 'What time do you open on Sunday?'

let s: TestServer
let flux: FluxFake
let openai: FakeOpenAI
let speech: SpeechFake
let dev: { id: string; key: string }
let agent: string

const byok = (method: string, path: string, body?: unknown) => s.api(method, `/byok${path}`, { key: dev.key, body })

beforeAll(async () => {
  flux = startFluxFake(FLUX_KEY)
  openai = startOpenAIFake({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini'] })
  speech = startSpeechFake(ELEVEN_KEY)
  s = await startTestServer({ OPENAI_BASE_URL: openai.baseUrl, DEEPGRAM_BASE_URL: flux.url, ELEVENLABS_BASE_URL: speech.url })
  dev = await s.developer({ plan: 'pro', name: 'Flux keys' })
  agent = (await s.agent(dev.key, { name: 'Flux', voice: { answersCalls: true, flux: { eagerEotThreshold: 0.5, eotTimeoutMs: 3000 } } })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558100', source: 'rented', agent })
  await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })
})
afterAll(async () => {
  await s?.stop()
  await openai?.stop()
  speech?.stop()
  flux?.stop()
})

/** A call to a sandbox callee who asks QUESTION; its id. */
async function callAsking(contact: string): Promise<string> {
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent(contact)}`, { pickup: 'answer', ringMs: 0, lines: [QUESTION], hangupAfterMs: 60_000 })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: 'Hi, this is the shop.', overrides: { voice: VOICE } } })
  expect(placed.status).toBe(202)
  return placed.body.id
}

describe('BYOK on Deepgram Flux', () => {
  test('a wrong key is not saved; a Flux model is offered and chosen', async () => {
    const wrong = await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: 'dg-wrong-0000', model: 'flux-general-en' } })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error).not.toContain('dg-wrong-0000')
    const stt = await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: FLUX_KEY, model: 'flux-general-en' } })
    expect(stt.body.stt).toMatchObject({ provider: 'deepgram', models: FLUX_FAKE_MODELS, model: 'flux-general-en' })
    expect((await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'gpt-4o-mini' } })).status).toBe(200)
    expect((await byok('PUT', '/keys/tts', { provider: 'elevenlabs', credentials: { apiKey: ELEVEN_KEY, model: 'eleven_flash_v2_5' } })).status).toBe(200)
    expect((await byok('PATCH', '', { enabled: true })).body).toMatchObject({ enabled: true, using: 'own' })
  })

  test("a call hears the caller through Flux with the agent's settings, and answers on its end of turn", async () => {
    flux.utterances.push(QUESTION)
    openai.reply({ kind: 'stream', text: ['We open at eight on Sundays.'] })
    const id = await callAsking('+14155558101')
    const answered = await until(
      'the question answered',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'completed' || (r.body.transcript as { speaker: string }[]).some((l, i, t) => l.speaker === 'customer' && t.slice(i + 1).some((a) => a.speaker === 'agent')),
      30_000,
    )
    expect(flux.streams.at(-1)).toEqual({ model: 'flux-general-en', encoding: 'linear16', sample_rate: '16000', eager_eot_threshold: '0.5', eot_timeout_ms: '3000' })
    const t = answered.body.transcript as { speaker: string; text: string }[]
    expect(t.filter((l) => l.speaker === 'customer').map((l) => l.text)).toEqual([QUESTION])
    expect(flux.events).toContain('EndOfTurn')
  })

  test("Flux failing mid-call fails the call with Deepgram's reason, no fallback; the developer is told", async () => {
    flux.utterances.push({ text: QUESTION, ends: false })
    flux.events.length = 0
    const id = await callAsking('+14155558102')
    await until(
      'the caller speaking',
      async () => flux.events,
      (e) => e.includes('StartOfTurn'),
      30_000,
    )
    flux.failStreams('the model is overloaded')
    const failed = await until(
      'the call failed',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'failed' || r.body.status === 'completed',
      30_000,
    )
    expect(failed.body.error).toContain('Deepgram Flux: the model is overloaded')
    const notices = await until(
      'the notice',
      async () => (await s.console('GET', `/workspaces/${dev.id}/notifications`)).body.items.filter((n: any) => n.kind === 'byok.failed'),
      (n) => n.length > 0,
    )
    expect(notices[0].body).toContain('Deepgram Flux: the model is overloaded')
  })
})
