/**
 * BYOK end to end against local fakes of the vendors' real APIs (OpenAI-compatible GET /models,
 * Anthropic's model list, Deepgram projects and models, ElevenLabs models and voices): every 409,
 * a rejected key not stored, keys never in plaintext in DATA_DIR, replies and calls running on the
 * keys with no fallback (and one failure notice a day per provider), agent choices going stale, a
 * customer's own set overriding, and the developer switching everyone off.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type FakeAnthropic, startAnthropicFake } from '../fakes/anthropic'
import { DEEPGRAM_STT_MODELS, type DeepgramFake, startDeepgramFake } from '../fakes/deepgram'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { type SpeechFake, startSpeechFake } from '../fakes/speech-vendors'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const ANTHROPIC_KEY = 'sk-ant-byok-test-key-AAAA1111'
const OPENAI_KEY = 'sk-openai-byok-test-key-OOOO2222'
const DEEPGRAM_KEY = 'dg-byok-test-key-DDDD3333'
const ELEVEN_KEY = 'xi-byok-test-key-EEEE4444'
const CLAUDES = [
  { id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' },
  { id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' },
]

let s: TestServer
let anthropic: FakeAnthropic
let openai: FakeOpenAI
let deepgram: DeepgramFake
let speech: SpeechFake
let dev: { id: string; key: string }
let agent: string

const byok = (method: string, path: string, body?: unknown, opts: { key?: string; workspace?: string } = {}) =>
  s.api(method, `/byok${path}`, { key: opts.key ?? dev.key, workspace: opts.workspace, body })
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const chat = async (agentId: string, message: string, workspace?: string, key = dev.key) => {
  await advance(2_000)
  return s.api('POST', `/agents/${agentId}/test-chat`, { key, workspace, body: { message } })
}
const notices = async (ws: string) => (await s.console('GET', `/workspaces/${ws}/notifications`)).body.items.filter((n: any) => n.kind === 'byok.failed')

/** Every file under DATA_DIR, as bytes. */
function filesUnder(dir: string): Buffer[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [readFileSync(path)]
  })
}

beforeAll(async () => {
  anthropic = startAnthropicFake({ apiKey: ANTHROPIC_KEY, models: CLAUDES })
  openai = startOpenAIFake({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini', 'gpt-4.1-mini', 'whisper-1', 'tts-1', 'text-embedding-3-small'] })
  deepgram = startDeepgramFake(DEEPGRAM_KEY)
  speech = startSpeechFake(ELEVEN_KEY)
  s = await startTestServer({
    OPENAI_BASE_URL: openai.baseUrl,
    ANTHROPIC_BASE_URL: anthropic.baseUrl,
    DEEPGRAM_BASE_URL: deepgram.url.replace(/^http/, 'ws'),
    ELEVENLABS_BASE_URL: speech.url,
    // The OpenAI-compatible server of the customer's set is a fake on this machine.
    ALLOW_PRIVATE_WEBHOOK_TARGETS: '1',
  })
  dev = await s.developer({ plan: 'pro', name: 'Own keys' })
  agent = (await s.agent(dev.key, { name: 'Keyed', voice: { answersCalls: true } })).id
})
afterAll(async () => {
  await s?.stop()
  await anthropic?.stop()
  await openai?.stop()
  deepgram?.stop()
  speech?.stop()
})

describe('keys, verification and the switch', () => {
  test('nothing at first; switching on before all three keys is 409 naming what is missing', async () => {
    expect((await byok('GET', '')).body).toEqual({ enabled: false, using: 'none', stt: null, llm: null, tts: null })
    expect((await s.api('GET', '/models', { key: dev.key })).body).not.toHaveProperty('byok')
    const on = await byok('PATCH', '', { enabled: true })
    expect(on.status).toBe(409)
    expect(on.body.error).toContain('stt has no key')
    expect(on.body.missing).toEqual(['stt has no key', 'llm has no key', 'tts has no key'])
  })

  test('a read key reads status and nothing more; a build key cannot change keys', async () => {
    const read = (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'r', scope: 'read' })).body.key
    const build = (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'b', scope: 'build' })).body.key
    expect((await byok('GET', '', undefined, { key: read })).status).toBe(200)
    const body = { provider: 'anthropic', credentials: { apiKey: ANTHROPIC_KEY } }
    expect((await byok('PUT', '/keys/llm', body, { key: read })).status).toBe(403)
    expect((await byok('PUT', '/keys/llm', body, { key: build })).status).toBe(403)
    expect((await byok('PATCH', '', { enabled: false }, { key: build })).status).toBe(403)
  })

  test('a wrong provider id lists the valid ones; missing credentials are named', async () => {
    const r = await byok('PUT', '/keys/llm', { provider: 'gemini', credentials: { apiKey: 'x' } })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('provider: gemini is not a llm provider; valid ids: openai, anthropic, azure, openai-compatible')
    expect((await byok('PUT', '/keys/stt', { provider: 'elevenlabs', credentials: { apiKey: 'x' } })).body.error).toContain('deepgram, openai')
    expect((await byok('PUT', '/keys/tts', { provider: 'elevenlabs', credentials: {} })).body.field).toBe('credentials.apiKey')
    expect((await byok('PUT', '/keys/llm', { provider: 'openai-compatible', credentials: {} })).body.field).toBe('credentials.baseUrl')
    expect((await byok('PUT', '/keys/llm', { provider: 'azure', credentials: { apiKey: 'k' } })).body.field).toBe('credentials.endpoint')
    expect((await byok('PUT', '/keys/llm', { provider: 'anthropic', credentials: { apiKey: 'k', secret: 'x' } })).status).toBe(400)
    expect((await byok('PUT', '/keys/voice', { provider: 'openai', credentials: { apiKey: 'k' } })).status).toBe(404)
  })

  test('a key the provider rejects is not saved', async () => {
    const r = await byok('PUT', '/keys/llm', { provider: 'anthropic', credentials: { apiKey: 'sk-ant-wrong-key-9999' } })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ field: 'credentials.apiKey' })
    expect(r.body.error).toContain('not saved')
    expect(r.body.error).not.toContain('sk-ant-wrong-key-9999')
    expect((await byok('GET', '')).body.llm).toBeNull()
    const stored = await s.server.services.store.collection<any>({ name: 'byok_keys', indexes: [] })
    expect(await stored.count({ workspaceId: dev.id })).toBe(0)
    expect((await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: 'dg-wrong' } })).status).toBe(400)
    expect((await byok('PUT', '/keys/tts', { provider: 'elevenlabs', credentials: { apiKey: 'xi-wrong' } })).status).toBe(400)
  })

  test('verified keys show the last four characters and the models the provider offered', async () => {
    const llm = await byok('PUT', '/keys/llm', { provider: 'anthropic', credentials: { apiKey: ANTHROPIC_KEY } })
    expect(llm.status).toBe(200)
    expect(llm.body.llm).toMatchObject({ provider: 'anthropic', key: '…1111', models: CLAUDES.map((m) => m.id), model: null, credentials: {} })
    expect(JSON.stringify(llm.body)).not.toContain(ANTHROPIC_KEY)
    expect(anthropic.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models', headers: { 'x-api-key': ANTHROPIC_KEY } })
    const stt = await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: DEEPGRAM_KEY, model: 'nova-3' } })
    expect(stt.body.stt).toMatchObject({ provider: 'deepgram', key: '…3333', models: DEEPGRAM_STT_MODELS, model: 'nova-3' })
    expect((await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: DEEPGRAM_KEY, model: 'whisper' } })).body.field).toBe('credentials.model')
    const tts = await byok('PUT', '/keys/tts', { provider: 'elevenlabs', credentials: { apiKey: ELEVEN_KEY } })
    // ElevenLabs' speech-to-speech model is not a text-to-speech one.
    expect(tts.body.tts).toMatchObject({ provider: 'elevenlabs', key: '…4444', models: ['eleven_flash_v2_5', 'eleven_multilingual_v2'], model: null })
    // Replacing with the same provider keeps the model.
    expect((await byok('PUT', '/keys/stt', { provider: 'deepgram', credentials: { apiKey: DEEPGRAM_KEY } })).body.stt.model).toBe('nova-3')

    const on = await byok('PATCH', '', { enabled: true })
    expect(on.status).toBe(409)
    expect(on.body.missing).toEqual(['llm has no model', 'tts has no model'])
  })

  test('a model must be one the key offers; refreshModels reloads the list', async () => {
    const bad = await byok('PATCH', '/keys/llm', { model: 'gpt-4o' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain('claude-sonnet-4-5, claude-haiku-4-5')
    expect((await byok('PATCH', '/keys/llm', {})).status).toBe(400)
    expect((await byok('PATCH', '/keys/llm', { model: 'claude-sonnet-4-5' })).body.llm.model).toBe('claude-sonnet-4-5')
    const before = speech.requests.length
    const refreshed = await byok('PATCH', '/keys/tts', { refreshModels: true, model: 'eleven_flash_v2_5' })
    expect(refreshed.body.tts).toMatchObject({ model: 'eleven_flash_v2_5' })
    expect(speech.requests.length).toBe(before) // GET /v1/models is not recorded by the fake; the answer is what matters
    expect((await byok('PATCH', '/keys/tts', { refreshModels: true })).status).toBe(200)
  })

  test('on with all three; GET /models gains byok; removing a key while on is 409; keys never in plaintext in DATA_DIR', async () => {
    const on = await byok('PATCH', '', { enabled: true })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({ enabled: true, using: 'own' })
    const models = await s.api('GET', '/models', { key: dev.key })
    expect(models.body.byok).toEqual({ using: 'own', provider: 'anthropic', models: CLAUDES.map((m) => m.id), model: 'claude-sonnet-4-5' })
    const removed = await byok('DELETE', '/keys/stt')
    expect(removed.status).toBe(409)
    expect(removed.body.error).toContain('switch it off')
    for (const bytes of filesUnder(s.dataDir)) {
      for (const secret of [ANTHROPIC_KEY, DEEPGRAM_KEY, ELEVEN_KEY]) expect(bytes.includes(secret)).toBe(false)
    }
  })
})

describe('running on the keys', () => {
  test('replies run on the llm key, with no fallback; a failure tells the developer once a day per provider', async () => {
    anthropic.reply({ kind: 'stream', blocks: [{ text: ['Hello from your own Claude.'] }] })
    const r = await chat(agent, 'Hi there')
    expect(r.status).toBe(200)
    expect(r.body.reply).toBe('Hello from your own Claude.')
    expect(anthropic.requests.at(-1)).toMatchObject({ path: '/v1/messages', headers: { 'x-api-key': ANTHROPIC_KEY }, body: { model: 'claude-sonnet-4-5' } })

    anthropic.reply({ kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' })
    const failed = await chat(agent, 'Are you there?')
    expect(failed.status).toBe(502)
    anthropic.reply({ kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' })
    expect((await chat(agent, 'Still there?')).status).toBe(502)
    const told = await notices(dev.id)
    expect(told).toHaveLength(1)
    expect(told[0]).toMatchObject({ title: 'Your anthropic key failed', data: { provider: 'anthropic', job: 'llm' } })
    await advance(86_400_000)
    anthropic.reply({ kind: 'error', status: 500, type: 'api_error', message: 'Internal error' })
    expect((await chat(agent, 'Tomorrow?')).status).toBe(503) // a vendor 500 passes with time
    expect(await notices(dev.id)).toHaveLength(2)
  })

  test('voices of the voice key with samples; a preview answers audio', async () => {
    const voices = await byok('GET', '/voices')
    expect(voices.status).toBe(200)
    expect(voices.body.items).toEqual([
      { id: '9BWtsMINqrJLrRacOk9x', name: 'Aria', sample: expect.stringContaining('preview.mp3') },
      { id: 'JBFqnCBsd6RMkjVDRZzb', name: 'George', sample: null },
    ])
    const clip = await fetch(`${s.url}/api/v1/byok/voices/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ voice: 'JBFqnCBsd6RMkjVDRZzb', text: 'Hello, this is George.' }),
    })
    expect(clip.status).toBe(200)
    expect(clip.headers.get('content-type')).toBe('audio/mpeg')
    const bytes = new Uint8Array(await clip.arrayBuffer())
    expect([...bytes.subarray(0, 3)]).toEqual([0x49, 0x44, 0x33]) // ID3
    expect(speech.requests.at(-1)).toMatchObject({ path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128', body: { model_id: 'eleven_flash_v2_5' } })
    expect((await byok('POST', '/voices/preview', { voice: 'JBFqnCBsd6RMkjVDRZzb', text: 'x'.repeat(201) })).status).toBe(400)
    expect((await byok('POST', '/voices/preview', { voice: 'nobody', text: 'Hi' })).body.field).toBe('voice')
  })

  test("an agent's model and voice choices: checked against the keys, null reverts, stale when no longer reachable", async () => {
    expect((await byok('PUT', `/agents/${agent}`, { model: 'gpt-4o' })).body.field).toBe('model')
    expect((await byok('PUT', `/agents/${agent}`, { voice: 'nobody' })).body.field).toBe('voice')
    const chosen = await byok('PUT', `/agents/${agent}`, { model: 'claude-haiku-4-5', voice: 'JBFqnCBsd6RMkjVDRZzb' })
    expect(chosen.body).toEqual({ agent, model: 'claude-haiku-4-5', voice: 'JBFqnCBsd6RMkjVDRZzb', stale: { model: false, voice: false } })
    anthropic.reply({ kind: 'stream', blocks: [{ text: ['Haiku here.'] }] })
    expect((await chat(agent, 'Which model?')).body.reply).toBe('Haiku here.')
    expect(anthropic.requests.at(-1)?.body.model).toBe('claude-haiku-4-5')
    expect((await byok('GET', '/agents/ag_nope')).status).toBe(404)

    // The llm key moves to an OpenAI-compatible server: the Claude choice is no longer reachable.
    const moved = await byok('PUT', '/keys/llm', { provider: 'openai-compatible', credentials: { apiKey: OPENAI_KEY, baseUrl: openai.baseUrl, model: 'gpt-4o-mini' } })
    expect(moved.body.llm).toMatchObject({ provider: 'openai-compatible', credentials: { baseUrl: openai.baseUrl }, model: 'gpt-4o-mini', key: '…2222' })
    expect((await byok('GET', `/agents/${agent}`)).body.stale).toEqual({ model: true, voice: false })
    openai.reply({ kind: 'stream', text: ['Mini here.'] })
    expect((await chat(agent, 'And now?')).body.reply).toBe('Mini here.') // the key's model meanwhile
    expect((await byok('PUT', `/agents/${agent}`, { model: null })).body).toMatchObject({ model: null, stale: { model: false } })
    // Replacing a key while on needs a model (OpenAI offers this key two chat models).
    const unchosen = await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: OPENAI_KEY } })
    expect(unchosen.status).toBe(409)
    expect(unchosen.body.error).toContain('gpt-4o-mini, gpt-4.1-mini')
    expect((await byok('GET', '')).body.llm.provider).toBe('openai-compatible') // unchanged
  })

  test('a call runs its speech on the stt and tts keys', async () => {
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558000', source: 'rented', agent })
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558001' })
    await s.console('PUT', '/sandbox/phones/%2B14155558001', { pickup: 'answer', ringMs: 0, hangupAfterMs: 20_000 })
    await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })
    // A per-call voice must be one the voice key offers, not one of the service's own voices.
    const ours = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558001', purpose: 'A quick check', overrides: { voice: 'aria' } } })
    expect(ours.status).toBe(400)
    expect(ours.body.field).toBe('overrides.voice')
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558001', purpose: 'A quick check', overrides: { voice: 'JBFqnCBsd6RMkjVDRZzb' } } })
    expect(placed.status).toBe(202)
    const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    const row = await until(
      'media',
      async () => (await tries.find({ callId: placed.body.id }))[0],
      (r) => !!r?.pipeline,
    )
    expect(row.pipeline).toMatchObject({ stt: 'deepgram', tts: 'elevenlabs' })
    await until(
      'deepgram stream',
      async () => deepgram.streams,
      (streams) => streams.length > 0,
    )
    expect(deepgram.streams.at(-1)).toMatchObject({ model: 'nova-3' })
    await advance(21_000)
  })
})

describe('customers', () => {
  test("a customer uses the developer's keys; its own complete set overrides; the developer switching off switches it off", async () => {
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id
    const helper = (await s.agent(dev.key, { name: 'Helper' }, customer)).id
    expect((await byok('GET', '', undefined, { workspace: customer })).body).toMatchObject({ enabled: false, using: 'developer', llm: null })
    expect((await s.api('GET', '/models', { key: dev.key, workspace: customer })).body.byok).toMatchObject({ using: 'developer', provider: 'openai-compatible' })

    // Its own set: OpenAI for all three jobs.
    const own = { workspace: customer }
    expect((await byok('PUT', '/keys/stt', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'whisper-1' } }, own)).body.stt.models).toEqual(['whisper-1'])
    expect((await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'gpt-4.1-mini' } }, own)).body.llm.models).toEqual(['gpt-4o-mini', 'gpt-4.1-mini'])
    expect((await byok('PUT', '/keys/tts', { provider: 'openai', credentials: { apiKey: OPENAI_KEY, model: 'tts-1' } }, own)).status).toBe(200)
    expect((await byok('PATCH', '', { enabled: true }, own)).body).toMatchObject({ enabled: true, using: 'own' })
    openai.reply({ kind: 'stream', text: ['From the customer key.'] })
    expect((await chat(helper, 'Hello', customer)).body.reply).toBe('From the customer key.')
    expect(openai.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4.1-mini' } })
    // OpenAI voices: the fixed set, no hosted clips; the preview is a WAV.
    expect((await byok('GET', '/voices', undefined, own)).body.items[0]).toEqual({ id: 'alloy', name: 'Alloy', sample: null })

    // The developer switches off: the customer is off too, and runs on the service's providers again.
    expect((await byok('PATCH', '', { enabled: false })).body).toMatchObject({ enabled: false, using: 'none' })
    expect((await byok('GET', '', undefined, own)).body).toMatchObject({ enabled: false, using: 'none' })
    const local = await chat(helper, 'Hello again', customer)
    expect(local.status).toBe(200)
    expect(openai.requests.at(-1)?.body?.messages?.at(-1)?.content).not.toBe('Hello again')
    const refused = await byok('PATCH', '', { enabled: true }, own)
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain("developer's BYOK is off")
    // Off: keys may be removed.
    expect((await byok('DELETE', '/keys/tts', undefined, own)).body.tts).toBeNull()
    expect((await byok('DELETE', '/keys/tts', undefined, own)).status).toBe(404)
  })
})
