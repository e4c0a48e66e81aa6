/**
 * Deepgram Flux at the phone line, tried as Twilio carries a call (as barge-in-line.test.ts: the
 * service with TELEPHONY_PROVIDER=twilio, a real Media Streams client in a process of its own, real
 * time, marks echoed, `clear` honoured), hearing the caller through the Flux adapter against the
 * local Flux fake (test/fakes/deepgram-flux.ts) with `STT_PROVIDER=deepgram-flux`, the agent's
 * `voice.flux` asking for eager ends; the agent's voice is espeak-ng, its model the local one.
 *
 * The caller asks "What time do you open on Sunday?", pauses a second, then adds "and on
 * Monday?": the fake reports the pause as an eager end of turn (the rules alone would answer a
 * whole question after 300 ms), then the turn resumed, and ends the turn after the second phrase. Asserted on the wire and the call's transcript: no answer in the pause, one answer after
 * the end, the caller's line the whole turn; and a caller talking over the opening still clears it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEFAULT_VOICE } from '../../src/catalog/voices'
import { EspeakTts } from '../../src/providers/tts/espeak'
import { PHONE_RATE } from '../../src/voice/codecs'
import { startFluxFake } from '../fakes/deepgram-flux'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { AUDIBLE_DBFS, callerSpeech, FRAME_MS, judgeBargeIn, TwilioCaller } from '../support/twilio-line'
import { startTwilioServer, streamOf, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const KEY = 'dg-flux-line-key-4321'
const GREETING = 'Hello, how can I help?'
const LONG_OPENING =
  'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven at the address we have on file for you.'
/** The caller's pause inside the turn: over three times the rules' wait for a whole question. */
const PAUSE_MS = 1_000
const silence = (ms: number) => new Int16Array((PHONE_RATE * ms) / 1000)
const join = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

async function spokenMs(text: string): Promise<number> {
  let samples = 0
  const tts = new EspeakTts()
  for await (const pcm of tts.synthesize(text, { voice: DEFAULT_VOICE, language: 'en' })) samples += pcm.length
  return (samples * 1000) / tts.sampleRate
}

describeNeeding(ESPEAK)('Deepgram Flux at a Twilio line', () => {
  const flux = startFluxFake(KEY)
  let twilio: TwilioServer
  beforeAll(async () => {
    twilio = await startTwilioServer({ STT_PROVIDER: 'deepgram-flux', DEEPGRAM_API_KEY: KEY, DEEPGRAM_BASE_URL: flux.url })
  })
  afterAll(async () => {
    await twilio?.stop()
    flux.stop()
  })

  /** An outbound call of an agent whose Flux asks for eager ends, answered by a person: its Media Streams script. */
  async function answered(name: string, agentNumber: string, contact: string, purpose: string) {
    const { s, fake } = twilio
    const dev = await s.developer({ plan: 'scale', name })
    const agent = (await s.agent(dev.key, { name: 'Bookings', voice: { answersCalls: true, flux: { eagerEotThreshold: 0.5 } } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: agentNumber, source: 'rented', agent })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose } })
    expect(placed.status).toBe(202)
    const sent = fake.calls.at(-1)!
    expect(await fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
    await until(
      'connected',
      () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
    )
    return { id: placed.body.id as string, key: dev.key, stream: { ...streamOf(fake, sent.sid), authToken: fake.authToken, accountSid: fake.accountSid, callSid: sent.sid } }
  }

  test('a pause Flux calls an eager end, then resumed, gets no answer; its end of turn does, on the whole turn', async () => {
    const { s } = twilio
    const first = callerSpeech(ESPEAK.path!, 'What time do you open on Sunday?')
    const second = callerSpeech(ESPEAK.path!, 'and on Monday?')
    flux.utterances.push({ text: 'What time do you open on Sunday?', ends: false }, 'and on Monday?')
    flux.events.length = 0
    const { id, key, stream } = await answered('Flux line', '+14155550800', '+14155550801', GREETING)
    // The line starts sending 300 ms into the greeting, silence until half a second after its end: the caller does not talk over it.
    const lead = Math.ceil((await spokenMs(GREETING)) / FRAME_MS) * FRAME_MS + 200
    const line = TwilioCaller.start({ ...stream, speech: join(silence(lead), first, silence(PAUSE_MS), second), bargeInAtMs: 300 })
    try {
      await line.next('spoken')
      const done = await until(
        'the caller answered',
        () => s.api('GET', `/calls/${id}`, { key }),
        (r) => (r.body.transcript as { speaker: string }[]).some((l, i, t) => l.speaker === 'customer' && t.slice(i + 1).some((a) => a.speaker === 'agent')),
        30_000,
      )
      const t = done.body.transcript as { speaker: string; text: string }[]
      expect(t.filter((l) => l.speaker === 'customer').map((l) => l.text)).toEqual(['What time do you open on Sunday? and on Monday?'])
      expect(flux.events.filter((e) => e !== 'Update')).toEqual(['StartOfTurn', 'EagerEndOfTurn', 'TurnResumed', 'EagerEndOfTurn', 'EndOfTurn'])
      const log = await until(
        'the answer at the line',
        () => line.log(),
        (l) => {
          const last = l.callerFrames.findLast((f) => f.speech)!
          return l.media.some((m) => m.at > last.at && m.dbfs > AUDIBLE_DBFS)
        },
      )
      const speech = log.callerFrames.filter((f) => f.speech)
      const [from, to] = [speech[0]!.at, speech.at(-1)!.at]
      // Nothing of an answer reached the line while the caller was speaking, the pause in it included.
      expect(log.media.filter((m) => m.at > from && m.at <= to + FRAME_MS && m.dbfs > AUDIBLE_DBFS)).toEqual([])
      const answerAt = log.media.find((m) => m.at > to && m.dbfs > AUDIBLE_DBFS)!.at
      console.log(`flux at the line: the answer's first audible audio ${Math.round(answerAt - to)} ms after the caller's last speech frame`)
    } finally {
      await line.hangUp()
    }
  }, 90_000)

  test('a caller talking over the opening still clears it', async () => {
    flux.utterances.push('Sorry, can I ask something?')
    const { stream } = await answered('Flux barge-in', '+14155550802', '+14155550803', LONG_OPENING)
    const line = TwilioCaller.start({ ...stream, speech: callerSpeech(ESPEAK.path!, 'Sorry, can I ask something?'), bargeInAtMs: 2_000 })
    try {
      await line.next('spoken')
      const { clearedAt, lastSpeechAt } = judgeBargeIn(await line.log())
      // Cleared while the caller was still speaking.
      expect(clearedAt).not.toBeNull()
      expect(clearedAt!).toBeLessThan(lastSpeechAt)
    } finally {
      await line.hangUp()
    }
  }, 90_000)
})
