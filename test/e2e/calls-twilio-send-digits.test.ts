/**
 * The agent's send_digits on TELEPHONY_PROVIDER=twilio, end to end against the local fake of
 * Twilio's REST API: the callee's line (a Media Streams client signed as Twilio signs, real time)
 * says a phone menu in espeak-ng's voice (Deepgram's adapter against its fake gives the words),
 * the `local` model presses the key of the option its call is about, and what Twilio receives for
 * it is the stream's ordinary `media` messages carrying the key's DTMF tones (heard back with our
 * Goertzel listener) followed by a `mark`: no REST update of the call (which would replace the
 * TwiML running the stream) and no other message type.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodeMulaw, encodeMulaw } from '../../src/voice/codecs'
import { KeypadListener } from '../../src/voice/keypad'
import { type DeepgramFake, startDeepgramFake } from '../fakes/deepgram'
import { systemBinary } from '../support/system-binary'
import { callerSpeech, FRAME_SAMPLES } from '../support/twilio-line'
import { openStream, startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng', 'ESPEAK_NG')
const DEEPGRAM_KEY = 'dg-send-digits-key-0123456789'
const MENU = 'Press 1 for appointments, press 2 for billing.'
let deepgram: DeepgramFake
let twilio: TwilioServer

beforeAll(async () => {
  deepgram = startDeepgramFake(DEEPGRAM_KEY)
  twilio = await startTwilioServer({ STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.url.replace(/^http/, 'ws') })
})
afterAll(async () => {
  await twilio?.stop()
  deepgram?.stop()
})

test.skipIf(!ESPEAK.path)(
  'a phone menu: the key goes to Twilio as DTMF tones in media messages, then a mark; nothing over REST',
  async () => {
    const { fake, s } = twilio
    const dev = await s.developer({ plan: 'pro' })
    const agent = await s.agent(dev.key, { name: 'Booker', model: 'local', instructions: 'You call clinics to book an appointment for a patient.', voice: { answersCalls: true } })
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557960', source: 'rented', agent: agent.id })
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557961' })
    const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557961', purpose: 'Hi, I am calling to book an appointment for a patient.', agent: agent.id } })).body.id
    const sid = fake.calls.at(-1)!.sid
    expect(await fake.callback(sid, { CallStatus: 'in-progress' })).toBe(204)
    const streamSid = `MZ${id.slice(-8)}`
    const { socket, received } = await openStream(fake, sid, streamSid, { echoMarks: true })
    // The line streams the caller's side every 20 ms, as Twilio does: silence, then the menu once the opening has played.
    const speech = callerSpeech(ESPEAK.path!, MENU)
    const queue: Uint8Array[] = []
    const silence = encodeMulaw(new Int16Array(FRAME_SAMPLES))
    let seq = 3
    const tick = setInterval(() => {
      const payload = Buffer.from(queue.shift() ?? silence).toString('base64')
      socket.send(JSON.stringify({ event: 'media', sequenceNumber: String(seq++), streamSid, media: { track: 'inbound', chunk: String(seq), timestamp: String(seq * 20), payload } }))
    }, 20)
    try {
      await until(
        'the opening is heard',
        () => s.api('GET', `/calls/${id}`, { key: dev.key }),
        (r) => r.body.transcript.some((l: any) => l.speaker === 'agent'),
        15_000,
      )
      const before = received.length
      deepgram.utterances.push(MENU)
      for (let at = 0; at + FRAME_SAMPLES <= speech.length; at += FRAME_SAMPLES) queue.push(encodeMulaw(speech.subarray(at, at + FRAME_SAMPLES)))
      const pressed = await until(
        'the key in the transcript',
        () => s.api('GET', `/calls/${id}`, { key: dev.key }),
        (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.startsWith('[keypad]')),
        20_000,
      )
      expect(pressed.body.transcript.filter((l: any) => l.text.startsWith('[keypad]')).map((l: any) => l.text)).toEqual(['[keypad] 1'])
      // What Twilio received once the menu was heard (the caller's speech may have cut the opening
      // short: a `clear` then; the keys come after it): media (the tones) and marks only.
      const cleared = received.findLastIndex((m, i) => i >= before && m.event === 'clear')
      const after = received.slice(Math.max(before, cleared + 1))
      expect([...new Set(after.map((m) => m.event))].sort()).toEqual(['mark', 'media'])
      const listener = new KeypadListener()
      const keys: string[] = []
      for (const m of after) if (m.event === 'media') keys.push(...listener.push(decodeMulaw(new Uint8Array(Buffer.from(m.media.payload, 'base64'))), 8000))
      expect(keys).toEqual(['1'])
      expect(after.at(-1)).toMatchObject({ event: 'mark', streamSid })
      // Nothing went over REST for the keys: the call's TwiML was never replaced, nor the call ended.
      expect(fake.calls.find((c) => c.sid === sid)).toMatchObject({ twimls: [], updates: [] })
    } finally {
      clearInterval(tick)
      socket.close()
    }
  },
  60_000,
)
