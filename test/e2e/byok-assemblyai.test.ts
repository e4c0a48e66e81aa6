/**
 * BYOK with AssemblyAI as the workspace's speech-to-text, end to end against a local fake of its
 * v3 streaming API (test/fakes/assemblyai.ts): the key proved on its token endpoint (refused, rate
 * limited, offered models), the agent's turn settings checked and sent on the stream, a call whose
 * caller's words come from AssemblyAI's ended turn, and a stream the vendor cancels mid-call failing
 * the call with its reason, with no other engine standing in.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ASSEMBLYAI_MODELS } from '../../src/providers/stt/assemblyai'
import { type AssemblyAiFake, type AssemblyAiFakeOptions, startAssemblyAiFake } from '../fakes/assemblyai'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { type SpeechFake, startSpeechFake } from '../fakes/speech-vendors'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const AAI_KEY = 'aai-byok-test-key-AAAA5555'
const OPENAI_KEY = 'sk-openai-byok-test-key-OOOO6666'
const ELEVEN_KEY = 'xi-byok-test-key-EEEE7777'
const SEC = 1_000

let s: TestServer
let aai: AssemblyAiFake
/** Read by the fake as it runs: a test turns on a rate limit or a mid-stream failure. */
const aaiOptions: AssemblyAiFakeOptions = { wordMs: 100 }
let openai: FakeOpenAI
let speech: SpeechFake
let dev: { id: string; key: string }
let agent: string

const byok = (method: string, path: string, body?: unknown) => s.api(method, `/byok${path}`, { key: dev.key, body })
const notices = async (ws: string) => (await s.console('GET', `/workspaces/${ws}/notifications`)).body.items.filter((n: any) => n.kind === 'byok.failed')

beforeAll(async () => {
  aai = startAssemblyAiFake(AAI_KEY, aaiOptions)
  openai = startOpenAIFake({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini'], defaultReply: 'We open at eight on Sundays.' })
  speech = startSpeechFake(ELEVEN_KEY)
  s = await startTestServer({ OPENAI_BASE_URL: openai.baseUrl, ELEVENLABS_BASE_URL: speech.url, ASSEMBLYAI_BASE_URL: aai.url })
  dev = await s.developer({ plan: 'pro', name: 'Own AssemblyAI' })
  agent = (await s.agent(dev.key, { name: 'Turns', voice: { answersCalls: true } })).id
  await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })
})
afterAll(async () => {
  await s?.stop()
  await openai?.stop()
  aai?.stop()
  speech?.stop()
})

/** A call to a sandbox callee who says `lines`; the call's id. */
async function call(phone: string, lines: string[]): Promise<string> {
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, lines, hangupAfterMs: 60 * SEC })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: phone, purpose: 'Hello from Turns.' } })
  expect(placed.body).toMatchObject({ status: 'ringing' })
  return placed.body.id
}

describe('an AssemblyAI key', () => {
  test('a key AssemblyAI refuses is not saved; a rate-limited one is the vendor unavailable', async () => {
    const refused = await byok('PUT', '/keys/stt', { provider: 'assemblyai', credentials: { apiKey: 'aai-wrong-key-0000' } })
    expect(refused.status).toBe(400)
    expect(refused.body.field).toBe('credentials.apiKey')
    expect(refused.body.error).not.toContain('aai-wrong-key-0000')
    aaiOptions.restStatus = 429
    const limited = await byok('PUT', '/keys/stt', { provider: 'assemblyai', credentials: { apiKey: AAI_KEY } })
    aaiOptions.restStatus = undefined
    expect(limited.status).toBe(502)
    expect(limited.body.error).toContain('assemblyai is unavailable (HTTP 429)')
    expect((await byok('GET', '')).body.stt).toBeNull()
  })

  test('a verified key offers the streaming models; with llm and tts keys BYOK switches on', async () => {
    const stt = await byok('PUT', '/keys/stt', { provider: 'assemblyai', credentials: { apiKey: AAI_KEY } })
    expect(stt.status).toBe(200)
    expect(stt.body.stt).toMatchObject({ provider: 'assemblyai', key: '…5555', models: [...ASSEMBLYAI_MODELS] })
    expect((await byok('PATCH', '/keys/stt', { model: 'universal-streaming-english' })).body.stt.model).toBe('universal-streaming-english')
    expect((await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'gpt-4o-mini' } })).status).toBe(200)
    expect((await byok('PUT', '/keys/tts', { provider: 'elevenlabs', credentials: { apiKey: ELEVEN_KEY, model: 'eleven_flash_v2_5' } })).status).toBe(200)
    expect((await byok('PATCH', '', { enabled: true })).body).toMatchObject({ enabled: true, using: 'own' })
  })

  test("the agent's AssemblyAI turn settings are checked and stored", async () => {
    const over = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { assemblyai: { endOfTurnConfidence: 1.5 } } } })
    expect(over.status).toBe(400)
    const crossed = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { assemblyai: { minTurnSilenceMs: 900, maxTurnSilenceMs: 600 } } } })
    expect(crossed.status).toBe(400)
    expect(crossed.body.field).toBe('voice.assemblyai.minTurnSilenceMs')
    expect((await s.api('GET', `/agents/${agent}`, { key: dev.key })).body.voice.assemblyai).toBeNull()
    const set = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { assemblyai: { endOfTurnConfidence: 0.5, minTurnSilenceMs: 160 } } } })
    expect(set.status).toBe(200)
    expect(set.body.voice.assemblyai).toEqual({ endOfTurnConfidence: 0.5, minTurnSilenceMs: 160, maxTurnSilenceMs: null, formatTurns: null })
    const more = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { assemblyai: { maxTurnSilenceMs: 1200 } } } })
    expect(more.body.voice.assemblyai).toEqual({ endOfTurnConfidence: 0.5, minTurnSilenceMs: 160, maxTurnSilenceMs: 1200, formatTurns: null })
    await s.publish(dev.key, agent)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557000', source: 'rented', agent })).status).toBe(201)
  })
})

describe('a call on the AssemblyAI key', () => {
  test("the caller's words are AssemblyAI's ended turn; the stream carries the agent's settings", async () => {
    const line = 'What time do you open on Sunday?'
    aai.utterances.push(line)
    const id = await call('+14155557001', [line])
    const heard = await until(
      "the caller's line and the answer",
      async () => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body,
      (c) => c.transcript?.some((l: any) => l.speaker === 'agent' && l.text.includes('eight on Sundays')),
      30 * SEC,
    )
    expect(heard.transcript.find((l: any) => l.speaker === 'customer')?.text).toBe(line)
    expect(aai.streams.at(-1)).toMatchObject({
      speech_model: 'universal-streaming-english',
      format_turns: 'true',
      end_of_turn_confidence_threshold: '0.5',
      min_turn_silence: '160',
      max_turn_silence: '1200',
    })
    const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    expect((await tries.find({ callId: id }))[0].pipeline).toMatchObject({ stt: 'assemblyai', tts: 'elevenlabs' })
    await s.api('POST', `/calls/${id}/hangup`, { key: dev.key, body: {} })
  })

  test('AssemblyAI cancelling the stream mid-call fails the call with its reason; no other engine stands in', async () => {
    aaiOptions.failAfterMs = 500
    const id = await call('+14155557002', ['Do you have parking?'])
    const failed = await until(
      'the call failed',
      async () => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body,
      (c) => c.status === 'failed' || c.status === 'completed',
      30 * SEC,
    )
    aaiOptions.failAfterMs = undefined
    expect(failed.error).toContain('AssemblyAI closed the stream (3005 Session Cancelled: An error occurred)')
    expect(failed.transcript.filter((l: any) => l.speaker === 'customer')).toEqual([])
    const told = await notices(dev.id)
    expect(told.at(-1)).toMatchObject({ data: { provider: 'assemblyai', job: 'stt' } })
    expect(aai.closes).toContain(3005)
  })
})
