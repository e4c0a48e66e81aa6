/**
 * Barge-in at the phone line, tried as Twilio carries a call: the service on its default engines
 * (no vendor keys: Silero VAD, the live pocketsphinx decoder, the local model, espeak-ng) with
 * TELEPHONY_PROVIDER=twilio, and a real Media Streams client over a real socket in real time, in
 * a process of its own as Twilio is (test/support/twilio-line.ts: 20 ms μ-law frames, the agent's
 * audio played as it arrives, marks echoed, `clear` honoured). The agent opens with a long purpose;
 * 2 s into its audio the caller says "Sorry, can I ask something?" (espeak-ng). Everything asserted
 * is what crossed the socket, and the call's transcript from the API: no hook into the session.
 *
 * The target is `clear` within 300 ms of the caller's first speech frame, with under 100 ms of
 * audible agent audio reaching the caller after it. The 300 ms is a speed target with a thin
 * margin on a loaded 2-core host (Silero alone needs 120–240 ms of this utterance), so it is
 * measured by `npm run bench:barge-in` (p50/p95 over many calls) and printed here; this test
 * asserts what cannot be load: a clear at all, while the caller is still in the first half of
 * the question. Measured margins are in docs/benchmarks.md ("Barge-in at the line").
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEFAULT_VOICE } from '../../src/catalog/voices'
import { EspeakTts } from '../../src/providers/tts/espeak'
import { PHONE_RATE } from '../../src/voice/codecs'
import type { TestServer } from '../support/server'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { AUDIBLE_DBFS, callerSpeech, judgeBargeIn, TwilioCaller } from '../support/twilio-line'
import { answeredCall, startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const SPHINX = systemBinary('pocketsphinx_continuous', 'apt-get install pocketsphinx pocketsphinx-en-us')
const describeLocal = describeNeeding(ESPEAK.path ? SPHINX : ESPEAK)

const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven at the address we have on file for you.'
const QUESTION = 'Sorry, can I ask something?'
/** The caller starts talking this far into the agent's audio as the caller hears it. */
const BARGE_IN_AT_MS = 2_000
/**
 * The line is cleared this soon after the caller's first speech frame left: within the first half
 * of the 1.27 s question. The 300 ms target is bench:barge-in's; the regression this guards
 * against sent no clear at all.
 */
const CLEAR_WITHIN_MS = 640
/** ...and less than this much audible agent audio reaches the caller after the clear. */
const AUDIO_AFTER_CLEAR_MS = 100

/** The opening's whole length as the service's espeak-ng voice says it (the agent's default voice). */
async function openingMs(): Promise<number> {
  let samples = 0
  const tts = new EspeakTts()
  for await (const pcm of tts.synthesize(OPENING, { voice: DEFAULT_VOICE, language: 'en' })) samples += pcm.length
  return (samples * 1000) / tts.sampleRate
}

describeLocal('barge-in at a Twilio line, default engines', () => {
  let twilio: TwilioServer
  let s: TestServer
  beforeAll(async () => {
    twilio = await startTwilioServer()
    ;({ s } = twilio)
  })
  afterAll(async () => {
    await twilio?.stop()
  })

  test('2 s into a long opening the caller cuts in: cleared at once, the opening kept as heard, the question answered', async () => {
    const speech = callerSpeech(ESPEAK.path!, QUESTION)
    const { id, key, stream } = await answeredCall(twilio, { name: 'Line', agentNumber: '+14155550700', contact: '+14155550701', purpose: OPENING })
    const line = TwilioCaller.start({ ...stream, speech, bargeInAtMs: BARGE_IN_AT_MS })
    try {
      // The opening plays, the caller speaks over it; the wire is judged once their words have all left.
      await line.next('spoken')
      await Bun.sleep(500)
      const log = await line.log()
      // No clear at all: clearMs null, and the audio after it counted from the end of the caller's speech.
      const { clearedAt, clearMs, audibleAfterClearMs: afterClear, audibleAfterFirstFrameMs: afterFirstFrame, lastSpeechAt } = judgeBargeIn(log)
      const playedBeforeClear = (log.played.filter((p) => p.at <= (clearedAt ?? lastSpeechAt)).reduce((n, p) => n + p.samples, 0) * 1000) / PHONE_RATE
      console.log(
        `barge-in at the line: ${log.clears.length} clear(s), the first ${clearMs === null ? 'never' : Math.round(clearMs)} ms after the caller's first speech frame; audible agent audio after it ${afterClear} ms (after the first speech frame ${afterFirstFrame} ms); marks echoed ${log.marksPlayed.length} played, ${log.marksCleared.length} by the clear`,
      )
      expect(log.clears.length).toBeGreaterThanOrEqual(1)
      expect(clearMs!).toBeGreaterThan(0)
      expect(clearMs!).toBeLessThan(CLEAR_WITHIN_MS)
      expect(afterClear).toBeLessThan(AUDIO_AFTER_CLEAR_MS)
      // The clear dropped audio still buffered at the line: its marks came back by the clear.
      expect(log.marksCleared.length).toBeGreaterThan(0)

      // The interruption is a customer line, then the agent answers it.
      const answered = await until(
        'the caller interrupted and was answered',
        () => s.api('GET', `/calls/${id}`, { key }),
        (r) => {
          const t = r.body.transcript as { speaker: string; text: string }[]
          const asked = t.findIndex((l) => l.speaker === 'customer')
          return asked >= 1 && t.slice(asked + 1).some((l) => l.speaker === 'agent' && l.text.length > 0)
        },
        30_000,
      )
      // The transcript keeps what the caller heard of the opening: a whole-word prefix, about as
      // long as the audio played before the clear.
      const t = answered.body.transcript as { speaker: string; text: string }[]
      expect(t[0]!.speaker).toBe('agent')
      const heard = t[0]!.text
      expect(heard.length).toBeGreaterThan(0)
      expect(heard.length).toBeLessThan(OPENING.length)
      expect(OPENING.startsWith(heard)).toBe(true)
      expect([' ', ',', '.'].includes(OPENING[heard.length]!)).toBe(true)
      const whole = await openingMs()
      expect(heard.length).toBeLessThanOrEqual(Math.ceil((OPENING.length * (playedBeforeClear + 1_000)) / whole))
      expect(t[1]!.speaker).toBe('customer')
      expect(t[1]!.text.length).toBeGreaterThan(0)
      expect(t[2]!.speaker).toBe('agent')
      // The answer reached the line after the caller's question ended.
      const after = await line.log()
      expect(after.media.some((m) => m.at > lastSpeechAt && m.dbfs > AUDIBLE_DBFS)).toBe(true)
    } finally {
      await line.hangUp()
    }
  }, 90_000)
})
