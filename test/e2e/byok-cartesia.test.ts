/**
 * A Cartesia voice key through BYOK end to end, against local fakes of the vendors (Cartesia's
 * WebSocket and REST API, Deepgram, OpenAI): a refused key is not saved, the key's voices are
 * listed, a call speaks on it in one context a turn at the line's mu-law 8 kHz, and Cartesia
 * failing mid-stream fails the call with its reason, with no fallback to another engine.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CARTESIA_MODELS } from '../../src/providers/catalog'
import { type CartesiaFake, startCartesiaFake } from '../fakes/cartesia'
import { type DeepgramFake, startDeepgramFake } from '../fakes/deepgram'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const OPENAI_KEY = 'sk-openai-byok-cartesia-OOOO2222'
const DEEPGRAM_KEY = 'dg-byok-cartesia-DDDD3333'
const CARTESIA_KEY = 'sk_car_byok_test_CCCC5555'
const VOICE = 'a0e99841-438c-4a64-b679-ae501e7d6091'

let s: TestServer
let openai: FakeOpenAI
let deepgram: DeepgramFake
let cartesia: CartesiaFake
let dev: { id: string; key: string }

const byok = (method: string, path: string, body?: unknown) => s.api(method, `/byok${path}`, { key: dev.key, body })

beforeAll(async () => {
  openai = startOpenAIFake({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini'] })
  deepgram = startDeepgramFake(DEEPGRAM_KEY)
  cartesia = startCartesiaFake(CARTESIA_KEY)
  s = await startTestServer({ OPENAI_BASE_URL: openai.baseUrl, DEEPGRAM_BASE_URL: deepgram.url.replace(/^http/, 'ws'), CARTESIA_BASE_URL: cartesia.url })
  dev = await s.developer({ plan: 'pro', name: 'Cartesia keys' })
  const agent = (await s.agent(dev.key, { name: 'Sonic', voice: { answersCalls: true } })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558100', source: 'rented', agent })
  await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })
})
afterAll(async () => {
  await s?.stop()
  await openai?.stop()
  deepgram?.stop()
  cartesia?.stop()
})

async function call(to: string, voice = VOICE) {
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: to })
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent(to)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 20_000 })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'A quick check', overrides: { voice } } })
  expect(placed).toMatchObject({ status: 202 })
  return placed.body.id as string
}

describe('a Cartesia voice key', () => {
  test('a refused key is not saved; a good one offers the documented models and the key voices', async () => {
    const refused = await byok('PUT', '/keys/tts', { provider: 'cartesia', credentials: { apiKey: 'sk_car_wrong_9999' } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).not.toContain('sk_car_wrong_9999')
    expect((await byok('GET', '')).body.tts).toBeNull()
    const saved = await byok('PUT', '/keys/tts', { provider: 'cartesia', credentials: { apiKey: CARTESIA_KEY, model: 'sonic-3' } })
    expect(saved.status).toBe(200)
    expect(saved.body.tts).toMatchObject({ provider: 'cartesia', key: '…5555', models: [...CARTESIA_MODELS], model: 'sonic-3' })
    expect(cartesia.upgrades).toEqual([])
    await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: DEEPGRAM_KEY, model: 'nova-3' } })
    await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'gpt-4o-mini' } })
    expect((await byok('PATCH', '', { enabled: true })).status).toBe(200)
    const voices = await byok('GET', '/voices')
    expect(voices.body.items.map((v: { id: string }) => v.id)).toContain(VOICE)
  })

  test("a call speaks on the key: one context a turn, the key's voice and model, mu-law 8 kHz", async () => {
    const id = await call('+14155558101')
    const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    const row = await until(
      'media',
      async () => (await tries.find({ callId: id }))[0],
      (r) => !!r?.pipeline,
    )
    expect(row.pipeline).toMatchObject({ stt: 'deepgram', tts: 'cartesia' })
    const spoken = await until(
      "the opening's audio",
      () => Object.values(cartesia.chunks).reduce((n, c) => n + c, 0),
      (n) => n > 0,
      10_000,
    )
    expect(spoken).toBeGreaterThan(0)
    expect(cartesia.upgrades.at(-1)).toMatchObject({ status: 101, headers: { authorization: `Bearer ${CARTESIA_KEY}` } })
    const first = cartesia.requests.find((r) => r.transcript)
    expect(first).toMatchObject({ model_id: 'sonic-3', voice: { mode: 'id', id: VOICE }, output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }, continue: true })
    await s.console('POST', '/clock/advance', { ms: 21_000 })
    await until(
      'the call is over',
      async () => (await tries.find({ callId: id }))[0],
      (r) => r?.media === 'done',
      10_000,
    )
  })

  test('Cartesia failing mid-stream fails the call with its reason; nothing else speaks', async () => {
    cartesia.failAfterChunks = 2
    const before = cartesia.requests.length
    // Another voice: the first call's opening is in the phrase cache under its voice.
    const id = await call('+14155558102', 'f786b574-daa5-4673-aa0c-cbe3e8534c02')
    const ended = await until(
      'the call fails',
      async () => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body,
      (c) => c.hangup === 'failed',
      10_000,
    )
    expect(ended.error).toContain('text-to-speech failed: 500: the generation failed')
    expect(ended.transcript.filter((l: { role: string }) => l.role === 'agent')).toEqual([])
    expect(cartesia.requests.length).toBeGreaterThan(before)
  })
})
