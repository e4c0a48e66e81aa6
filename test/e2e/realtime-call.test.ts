/**
 * A call on a speech-to-speech model end to end: a workspace's BYOK OpenAI key reaches a Realtime
 * model (the local fake, test/fakes/openai-realtime.ts), the agent chooses it with a Realtime
 * voice, and a call runs over a real Twilio Media Streams socket (test/support/twilio-line.ts: 20
 * ms μ-law frames in real time, the agent's audio played as it arrives, marks echoed, `clear`
 * honoured). Asserted: what crossed both sockets and the call as the API reads it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PHONE_RATE } from '../../src/voice/codecs'
import { type RealtimeFake, startRealtimeFake } from '../fakes/openai-realtime'
import { TwilioLine } from '../support/twilio-line'
import { startTwilioServer, streamOf, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const KEY = 'sk-openai-realtime-e2e-KKKK7777'
const OPENING = 'Hello, this is the delivery team calling to confirm your parcel for tomorrow morning between nine and eleven.'

/** A 440 Hz tone: speech to the fake's energy VAD. */
const tone = (ms: number) => Int16Array.from({ length: (PHONE_RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / PHONE_RATE)))

let t: TwilioServer
let fake: RealtimeFake
let n = 0

beforeAll(async () => {
  fake = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime', 'gpt-4o-mini', 'whisper-1', 'tts-1'], wordMs: 300, speedup: 10 })
  t = await startTwilioServer({ OPENAI_BASE_URL: fake.baseUrl })
})
afterAll(async () => {
  await t?.stop()
  await fake?.stop()
})

/** A developer on its own OpenAI keys whose agent runs on gpt-realtime; its call placed and answered. */
async function realtimeCall(o: { voice?: string; beforeCall?: () => void; knowledge?: string; overrideVoice?: string } = {}) {
  const { s } = t
  n++
  const dev = await s.developer({ plan: 'scale', name: `Realtime ${n}` })
  const agent = (await s.agent(dev.key, { name: 'Deliveries', voice: { answersCalls: true } })).id
  const byok = (method: string, path: string, body?: unknown) => s.api(method, `/byok${path}`, { key: dev.key, body })
  if (o.knowledge) expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: o.knowledge, title: 'Deliveries FAQ' } })).status).toBe(201)
  expect((await byok('PUT', '/keys/stt', { provider: 'openai', credentials: { apiKey: KEY, model: 'whisper-1' } })).status).toBe(200)
  const llm = await byok('PUT', '/keys/llm', { provider: 'openai', credentials: { apiKey: KEY, model: 'gpt-4o-mini' } })
  expect(llm.body.llm.models).toContain('gpt-realtime')
  expect((await byok('PUT', '/keys/tts', { provider: 'openai', credentials: { apiKey: KEY, model: 'tts-1' } })).status).toBe(200)
  expect((await byok('PATCH', '', { enabled: true })).status).toBe(200)
  const choice = await byok('PUT', `/agents/${agent}`, { model: 'gpt-realtime', voice: o.voice ?? 'cedar', turnDetection: 'server_vad' })
  expect(choice.status).toBe(200)
  const number = `+1415555${String(1000 + n).padStart(4, '0')}`
  const contact = `+1415556${String(1000 + n).padStart(4, '0')}`
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
  o.beforeCall?.()
  const sessions = fake.sessions.length
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: OPENING, ...(o.overrideVoice ? { overrides: { voice: o.overrideVoice } } : {}) } })
  expect(placed.status).toBe(202)
  const id = placed.body.id as string
  const sent = t.fake.calls.at(-1)!
  const { wsUrl, token } = streamOf(t.fake, sent.sid)
  expect(await t.fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
  await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  const line = await TwilioLine.open(wsUrl, { authToken: t.fake.authToken, accountSid: t.fake.accountSid, callSid: sent.sid, token })
  const call = () => s.api('GET', `/calls/${id}`, { key: dev.key })
  /** This call's Realtime session at the fake, once it has asked for the opening. */
  const session = () =>
    until(
      'the realtime session',
      () => fake.sessions[sessions],
      (v) => v?.events.some((e) => e.type === 'response.create') === true,
      5_000,
    ).then((v) => v!)
  return { dev, agent, id, line, call, byok, session }
}

describe('a call on OpenAI Realtime (BYOK)', () => {
  test('the voices list says which voices the Realtime models have; a voice they lack is refused for a Realtime agent', async () => {
    const { byok, agent, line, dev } = await realtimeCall()
    line.close()
    // The models list offers the Realtime models the key reaches, as values of the agent's model choice.
    expect((await t.s.api('GET', '/models', { key: dev.key })).body.byok.models).toContain('gpt-realtime')
    const voices = (await byok('GET', '/voices')).body.items as { id: string; realtime?: boolean }[]
    for (const id of ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar']) expect(voices.find((v) => v.id === id)?.realtime).toBe(true)
    // fable is a text-to-speech voice only.
    expect(voices.find((v) => v.id === 'fable')?.realtime).toBeUndefined()
    const refused = await byok('PUT', `/agents/${agent}`, { voice: 'fable' })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toContain('not a voice of the Realtime model gpt-realtime')
    expect((await byok('GET', `/agents/${agent}`)).body).toMatchObject({ model: 'gpt-realtime', voice: 'cedar', turnDetection: 'server_vad', stale: { model: false, voice: false } })
  })

  test('μ-law both ways; a barge-in truncates the model to what the caller heard, and the transcript keeps only that', async () => {
    fake.heard.push('wait, is that the morning slot?')
    fake.replies.push({ text: 'Yes, the morning slot.' })
    const { line, call, id, session } = await realtimeCall()
    try {
      const log = await session()
      const update = log.events.find((e) => e.type === 'session.update').session
      expect(update.audio).toMatchObject({ input: { format: { type: 'audio/pcmu' } }, output: { format: { type: 'audio/pcmu' }, voice: 'cedar' } })
      expect(update.tools.map((tool: { name: string }) => tool.name)).toContain('end_call')
      // 1.5 s of the opening reaches the caller's ear, then they speak over it.
      await until(
        '1.5 s of the opening played',
        () => line.playedMs,
        (ms) => ms >= 1_500,
        10_000,
      )
      // What the caller has heard so far is on the transcript already, a second at a time.
      const hearing = (await until('the opening as heard so far', call, (r) => r.body.transcript.length === 1, 5_000)).body.transcript as { speaker: string; text: string }[]
      expect(OPENING.startsWith(hearing[0]!.text)).toBe(true)
      expect(hearing[0]!.text.length).toBeLessThan(OPENING.length)
      line.say(tone(600))
      const truncate = await until(
        'the truncate',
        () => log.events.find((e) => e.type === 'conversation.item.truncate'),
        (v) => v !== undefined,
        5_000,
      )
      // audio_end_ms is the last mark the line echoed as played before the clear: what the caller heard.
      const heardMarks = line.log.marksPlayed.filter((m) => m.startsWith('rt:'))
      const lastHeard = Number(heardMarks.at(-1)!.split(':')[3])
      expect(truncate.audio_end_ms).toBe(lastHeard)
      expect(truncate.audio_end_ms).toBeGreaterThanOrEqual(1_400)
      expect(line.log.clears.length).toBe(1)
      // The answer is on the transcript as it is heard, then whole once it has played.
      const done = await until('the answer heard whole', call, (r) => (r.body.transcript as { text: string }[]).at(-1)?.text === 'Yes, the morning slot.', 15_000)
      const transcript = done.body.transcript as { speaker: string; text: string }[]
      expect(transcript.map((l) => l.speaker)).toEqual(['agent', 'customer', 'agent'])
      const heard = transcript[0]!.text
      expect(OPENING.startsWith(heard)).toBe(true)
      // A word is 300 ms of the fake's audio: the words kept are those the truncate's audio_end_ms covers, cut at a word.
      const words = heard.split(' ').length
      expect(words).toBeGreaterThanOrEqual(Math.floor(truncate.audio_end_ms / 300) - 1)
      expect(words).toBeLessThanOrEqual(Math.ceil(truncate.audio_end_ms / 300))
      expect(transcript[1]!.text).toBe('wait, is that the morning slot?')
      expect(transcript[2]!.text).toBe('Yes, the morning slot.')
      expect(done.body.id).toBe(id)
      // The answer's turn is on the call's latency, from the caller's speech end (the server VAD's
      // 500 ms of silence after it are part of the wait) to the first audio sent and heard.
      const latency = (await until('the turn’s latency', call, (r) => (r.body.latency?.turns ?? 0) >= 1, 5_000)).body.latency
      expect(latency.toFirstAudioMs.p50).toBeGreaterThanOrEqual(480)
      expect(latency.toFirstHeardMs.p50).toBeGreaterThanOrEqual(latency.toFirstAudioMs.p50)
      expect(latency.llmFirstTokenMs).toBeNull()
    } finally {
      line.close()
    }
  }, 30_000)

  test('the agent’s end_call is the model’s function: answered with its output, the goodbye played, then the call ends', async () => {
    fake.heard.push('that is all, thank you')
    fake.replies.push({ tool: { name: 'end_call', arguments: { reason: 'the caller is done' } } }, { text: 'Goodbye!' })
    const { line, call, session } = await realtimeCall()
    const openingMarks = Math.ceil((OPENING.split(' ').length * 300) / 100)
    try {
      const log = await session()
      await until(
        'the opening played',
        () => line.log.marksPlayed.length,
        (n) => n >= openingMarks,
        15_000,
      )
      line.say(tone(500))
      const ended = await until('the call completed', call, (r) => r.body.status === 'completed', 20_000)
      const output = log.events.find((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output')
      expect(JSON.parse(output.item.output)).toEqual({ ending: true })
      expect(ended.body.hangup).toBe('answered')
      const transcript = ended.body.transcript as { speaker: string; text: string }[]
      expect(transcript.at(-1)).toMatchObject({ speaker: 'agent', text: 'Goodbye!' })
      // Each agent turn is kept with the model's usage, as a text model's reply is; the tool run with it.
      const tries = await t.s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
      const [row] = await tries.find({ callId: ended.body.id })
      const messages = await t.s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
      const agentTurns = (await messages.find({ conversationId: row.conversationId })).filter((m: any) => m.author === 'agent')
      expect(agentTurns.every((m: any) => m.model === 'gpt-realtime' && m.usage.outputAudioTokens > 0)).toBe(true)
      expect(agentTurns.flatMap((m: any) => m.tools.map((r: any) => r.name))).toEqual(['end_call'])
      // The goodbye reached the line before the hang-up.
      expect(line.log.marksPlayed.filter((m) => m.startsWith('rt:')).length).toBe(openingMarks + 3)
    } finally {
      line.close()
    }
  }, 40_000)

  test('a call’s overrides.voice among the model’s voices is the voice it speaks in', async () => {
    const { line, session } = await realtimeCall({ overrideVoice: 'verse' })
    try {
      const log = await session()
      expect(log.events.find((e) => e.type === 'session.update').session.audio.output.voice).toBe('verse')
    } finally {
      line.close()
    }
  })

  test('search_knowledge is the model’s function: the agent’s knowledge answers it', async () => {
    fake.heard.push('can you leave it with a neighbour')
    fake.replies.push({ tool: { name: 'search_knowledge', arguments: { query: 'leave the parcel with a neighbour' } } }, { text: 'Yes, with a neighbour.' })
    const knowledge = 'Neighbours\n\nIf you are out, the driver leaves the parcel with a neighbour and puts a card through your door.'
    const { line, session } = await realtimeCall({ knowledge })
    const openingMarks = Math.ceil((OPENING.split(' ').length * 300) / 100)
    try {
      const log = await session()
      await until(
        'the opening played',
        () => line.log.marksPlayed.length,
        (n) => n >= openingMarks,
        15_000,
      )
      line.say(tone(500))
      const output = await until(
        'the search’s output',
        () => log.events.find((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output'),
        (v) => v !== undefined,
        15_000,
      )
      const found = JSON.parse(output.item.output)
      expect(found.found).toBe(true)
      expect(found.passages[0].text).toContain('leaves the parcel with a neighbour')
    } finally {
      line.close()
    }
  }, 40_000)

  test('a key OpenAI refuses at the call fails it with OpenAI’s reason, and no other engine stands in', async () => {
    let before = 0
    try {
      // The key was good when saved; OpenAI refuses it by the time the call starts.
      const { line, call } = await realtimeCall({
        beforeCall: () => {
          fake.apiKey = 'sk-rotated-key'
          before = fake.requests.length
        },
      })
      line.close()
      const failed = await until('the call ended', call, (r) => r.body.status === 'completed', 10_000)
      expect(failed.body.hangup).toBe('failed')
      expect(failed.body.error).toContain('Incorrect API key provided')
      expect(failed.body.error).not.toContain(KEY)
      // Only the realtime socket was tried: no transcription or speech request went to the other engines.
      expect(fake.requests.slice(before).filter((r) => !r.endsWith('/v1/models') && r !== 'GET /v1/realtime')).toEqual([])
    } finally {
      fake.apiKey = KEY
    }
  }, 20_000)
})
