/**
 * Barge-in at a Twilio line with Cartesia as the voice (its fake, test/fakes/cartesia.ts), the rest
 * on the default engines: a real Media Streams client in a process of its own
 * (test/support/twilio-line.ts) hears the opening and says "Sorry, can I ask something?" 2 s into
 * it. The fake's words are uneven, as speech is (short words take longer a letter than long ones),
 * so a cut by the share of characters would keep words the caller never heard; with Cartesia's
 * word timestamps the transcript keeps exactly the words whose audio reached the caller before the
 * clear, less at most what the last echoed mark had not yet confirmed.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PHONE_RATE } from '../../src/voice/codecs'
import { type CartesiaFake, startCartesiaFake } from '../fakes/cartesia'
import type { TestServer } from '../support/server'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { callerSpeech, judgeBargeIn, TwilioCaller } from '../support/twilio-line'
import { answeredCall, startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const SPHINX = systemBinary('pocketsphinx_continuous', 'apt-get install pocketsphinx pocketsphinx-en-us')
const describeLocal = describeNeeding(ESPEAK.path ? SPHINX : ESPEAK)

const KEY = 'sk_car_line_test_7777'
/** Short words first, long ones after, in one clause: where a cut by characters and one by time part. */
const OPENING = 'So I am on it and we do it now with extraordinarily comprehensive documentation, and then the parcel arrives tomorrow between nine and eleven.'
const QUESTION = 'Sorry, can I ask something?'
const BARGE_IN_AT_MS = 2_000
/** The fake's words: 250 ms each plus 15 ms a character, then 40 ms apart (its gap). */
const WORD = { baseMs: 250, charMs: 15, gapMs: 40 }
/** Marks follow each 100 ms chunk of the playout (CHUNK_MS); one may not be echoed yet at the clear, and the clear itself is judged a frame later. */
const MARK_SLACK_MS = 100 + 20

/** When each word of the opening has ended in its audio, ms. */
function wordEnds(text: string): { word: string; endMs: number }[] {
  let at = 0
  return text.split(/\s+/).map((word) => {
    const endMs = at + WORD.baseMs + WORD.charMs * word.length
    at = endMs + WORD.gapMs
    return { word, endMs }
  })
}

describeLocal('barge-in at a Twilio line, Cartesia as the voice', () => {
  let twilio: TwilioServer
  let s: TestServer
  let cartesia: CartesiaFake
  beforeAll(async () => {
    cartesia = startCartesiaFake(KEY, { wordBaseMs: WORD.baseMs, wordMs: WORD.charMs, chunkMs: 20, speedup: 10, firstAudioMs: 50 })
    twilio = await startTwilioServer({ TTS_PROVIDER: 'cartesia', CARTESIA_API_KEY: KEY, CARTESIA_BASE_URL: cartesia.url })
    ;({ s } = twilio)
  })
  afterAll(async () => {
    await twilio?.stop()
    cartesia?.stop()
  })

  test('the transcript keeps only the words the caller heard before the clear', async () => {
    const speech = callerSpeech(ESPEAK.path!, QUESTION)
    const { id, key, stream } = await answeredCall(twilio, { name: 'Line', agentNumber: '+14155550720', contact: '+14155550721', purpose: OPENING })
    const line = TwilioCaller.start({ ...stream, speech, bargeInAtMs: BARGE_IN_AT_MS })
    try {
      await line.next('spoken')
      const log = await line.log()
      const { clearedAt } = judgeBargeIn(log)
      expect(clearedAt).not.toBeNull()
      const playedMs = (log.played.filter((p) => p.at <= clearedAt!).reduce((n, p) => n + p.samples, 0) * 1000) / PHONE_RATE
      const answered = await until(
        'the opening is settled as heard',
        () => s.api('GET', `/calls/${id}`, { key }),
        (r) => (r.body.transcript as { speaker: string }[]).some((l) => l.speaker === 'customer'),
        30_000,
      )
      const heard = (answered.body.transcript as { speaker: string; text: string }[])[0]!
      expect(heard.speaker).toBe('agent')
      expect(OPENING.startsWith(heard.text)).toBe(true)
      const ends = wordEnds(OPENING)
      const kept = heard.text.split(/\s+/).filter(Boolean).length
      console.log(`cartesia line: ${Math.round(playedMs)} ms of the opening played before the clear; the transcript keeps ${kept} words: "${heard.text}"`)
      // No word the caller did not hear whole...
      if (kept > 0) expect(ends[kept - 1]!.endMs).toBeLessThanOrEqual(playedMs)
      // ...and every word heard whole before the last mark the line could have echoed.
      expect(ends.filter((w) => w.endMs <= playedMs - MARK_SLACK_MS).length).toBeLessThanOrEqual(kept)
      expect(cartesia.cancelled.length).toBeGreaterThan(0)
    } finally {
      await line.hangUp()
    }
  }, 90_000)
})
