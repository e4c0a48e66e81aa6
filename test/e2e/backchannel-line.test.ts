/**
 * A backchannel the local engine cannot read, at the phone line (as resume-line.test.ts: the
 * service on its default engines with TELEPHONY_PROVIDER=twilio, a real Media Streams client in a
 * process of its own, real time, marks echoed, `clear` honoured). 2 s into the agent's long
 * purpose the caller says "Mhm." (espeak-ng), which pocketsphinx hears as words ("i can"). The
 * agent goes quiet at once (a `clear`), then, the speech short enough to be only a backchannel
 * (src/voice/interruption.ts), resumes from the last word the caller heard: no reply to it, and
 * the call counts it resumed. Everything asserted crossed the socket or came from the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { TestServer } from '../support/server'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { AUDIBLE_DBFS, callerSpeech, judgeBargeIn, TwilioCaller } from '../support/twilio-line'
import { answeredCall, startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const SPHINX = systemBinary('pocketsphinx_continuous', 'apt-get install pocketsphinx pocketsphinx-en-us')
const describeLocal = describeNeeding(ESPEAK.path ? SPHINX : ESPEAK)

const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven at the address we have on file for you.'
/** A backchannel pocketsphinx does not hear as one (espeak-ng's "Mhm." comes out as "i can" and the like). */
const BACKCHANNEL = 'Mhm.'
/** The caller speaks this far into the agent's audio as the caller hears it. */
const BACKCHANNEL_AT_MS = 2_000

type Line = { speaker: string; text: string }

describeLocal('a backchannel at a Twilio line, default engines', () => {
  let twilio: TwilioServer
  let s: TestServer
  beforeAll(async () => {
    twilio = await startTwilioServer()
    ;({ s } = twilio)
  })
  afterAll(async () => {
    await twilio?.stop()
  })

  test('2 s into a long opening the caller says "Mhm.": the agent goes quiet, resumes from the last word heard, and says nothing to it', async () => {
    const speech = callerSpeech(ESPEAK.path!, BACKCHANNEL)
    const { id, key, stream } = await answeredCall(twilio, { name: 'Backchannel', agentNumber: '+14155550720', contact: '+14155550721', purpose: OPENING })
    const line = TwilioCaller.start({ ...stream, speech, bargeInAtMs: BACKCHANNEL_AT_MS })
    try {
      await line.next('spoken')
      // The agent resumes, and the rest of what it meant to say plays out to its last word (the
      // transcript's line grows as the caller hears it).
      const done = await until(
        'the agent resumed its opening and it played out',
        () => s.api('GET', `/calls/${id}`, { key }),
        (r) => {
          const agent = (r.body.transcript as Line[]).filter((l) => l.speaker === 'agent')
          return agent.length >= 2 && agent.at(-1)!.text.endsWith(OPENING.slice(-20))
        },
        40_000,
      )
      const log = await line.log()
      const { clearedAt, clearMs, lastSpeechAt } = judgeBargeIn(log)
      const again = log.played.filter((p) => p.at > lastSpeechAt && p.samples > 0 && p.dbfs > AUDIBLE_DBFS)
      const resumedAudioMs = again.length * 20
      console.log(
        `backchannel at the line: ${log.clears.length} clear(s), the first ${clearMs === null ? 'never' : Math.round(clearMs)} ms after the caller's first speech frame; the agent audible again ${again.length ? Math.round(again[0]!.at - lastSpeechAt) : 'never'} ms after the caller's last speech frame, ${resumedAudioMs} ms of it`,
      )
      // The agent stopped while the caller spoke...
      expect(log.clears.length).toBe(1)
      expect(clearedAt!).toBeLessThan(lastSpeechAt + 1_000)
      // ...and spoke again after the backchannel: the rest of its opening.
      expect(resumedAudioMs).toBeGreaterThan(2_000)

      // The transcript: what the caller heard of the opening, cut at a whole word, then the rest
      // of it from there, and nothing said for the "Mhm." (no customer line, no answer).
      const t = done.body.transcript as Line[]
      expect(t.map((l) => l.speaker)).toEqual(['agent', 'agent'])
      const [heard, resumed] = [t[0]!.text, t[1]!.text]
      expect(heard.length).toBeGreaterThan(0)
      expect(OPENING.startsWith(heard)).toBe(true)
      expect([' ', ',', '.'].includes(OPENING[heard.length]!)).toBe(true)
      expect(`${heard} ${resumed}`).toBe(OPENING)
      // Counted as speech that stopped the agent, which then resumed.
      expect(done.body.latency.overlaps).toMatchObject({ resumed: 1, taken: 0 })
    } finally {
      await line.hangUp()
    }
  }, 90_000)
})
