/**
 * An agent's voice dials (src/voice/dials.ts) change what a caller lives, stepped on a simulated
 * clock (test/support/turn-harness.ts): patience decides whether a pause mid-sentence is cut,
 * interruptions whether speech over the agent stops it and what takes the turn, speed what the
 * speech engine is asked for. Each case runs beside the same call with no dials set.
 */
import { describe, expect, test } from 'bun:test'
import { SandboxTts } from '../../src/providers/tts/sandbox'
import { DEFAULT_DIALS, PATIENT_FLOOR_MS, QUICK_CAP_MS, type VoiceDials } from '../../src/voice/dials'
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import type { SynthesisOptions, TextToSpeech } from '../../src/voice/ports/tts'
import { flush, type HarnessOptions, turnHarness } from '../support/turn-harness'

const dials = (d: { speed?: number | null; patience?: Partial<VoiceDials['patience']>; interruptions?: Partial<VoiceDials['interruptions']> }): VoiceDials => ({
  speed: d.speed ?? null,
  patience: { ...DEFAULT_DIALS.patience, ...d.patience },
  interruptions: { ...DEFAULT_DIALS.interruptions, ...d.interruptions },
})

async function listening(d: VoiceDials | undefined, options: HarnessOptions = {}) {
  const h = turnHarness({ ...options, line: { ...(d ? { dials: d } : {}), ...options.line } })
  h.session.start(8000)
  await flush()
  expect(h.session.state).toBe('listening')
  return h
}

describe('patience', () => {
  // "Do you take new … patients?": on the local engines (pocketsphinx, whose words do not judge
  // turns) the rules wait 500 ms on no words; the corpus's pauses inside turns run up to 1,000 ms.
  async function pauseMidSentence(d: VoiceDials | undefined) {
    const h = await listening(d, { noTurnCues: true })
    await h.speak(700, '', 'Do you take new')
    await h.silence(900)
    return h
  }

  test('a normal agent cuts a 900 ms pause mid-sentence (local engines)', async () => {
    const h = await pauseMidSentence(undefined)
    expect(h.customer).toEqual(['Do you take new'])
    expect(h.asked.map((a) => a.text)).toEqual(['Do you take new'])
  })

  test('a patient agent does not: the caller goes on, and the whole sentence is one turn, answered once', async () => {
    const h = await pauseMidSentence(dials({ patience: { level: 'patient' } }))
    expect(h.session.state).toBe('maybeDone')
    expect(h.context().waitMs).toBe(PATIENT_FLOOR_MS.local)
    expect(h.context().why).toContain('a patient agent waits 1000 ms')
    expect(h.customer).toEqual([])
    await h.speak(400, '', 'patients?')
    await h.silence(PATIENT_FLOOR_MS.local + 200)
    expect(h.customer).toEqual(['Do you take new patients?'])
    expect(h.asked.map((a) => a.text)).toEqual(['Do you take new patients?'])
  })

  test('an explicit wait replaces the level: no pause shorter than it ends a turn', async () => {
    const h = await listening(dials({ patience: { level: 'quick', waitMs: 1_200 } }), { noTurnCues: true })
    await h.speak(700, '', 'My email is sam')
    await h.silence(1_100)
    expect(h.session.state).toBe('maybeDone')
    await h.silence(200)
    expect(h.customer).toEqual(['My email is sam'])
  })

  test("a patient agent on a vendor's words waits out a 500 ms pause after a question; a normal one does not", async () => {
    // A question mark is the hosted profile's shortest wait (turn-waits.ts), well under the patient floor.
    const normal = await listening(undefined)
    await normal.speak(600, 'Can I change my booking?')
    await normal.silence(500)
    expect(normal.customer).toEqual(['Can I change my booking?'])
    const patient = await listening(dials({ patience: { level: 'patient' } }))
    await patient.speak(600, 'Can I change my booking?')
    await patient.silence(500)
    expect(patient.session.state).toBe('maybeDone')
    expect(patient.context().waitMs).toBe(PATIENT_FLOOR_MS.hosted)
    await patient.speak(500, 'From Tuesday to Thursday.')
    await patient.silence(PATIENT_FLOOR_MS.hosted + 100)
    expect(patient.customer).toEqual(['Can I change my booking? From Tuesday to Thursday.'])
  })

  test('a quick agent answers a statement after 300 ms, where a normal one is still waiting; words that trail off still wait', async () => {
    const normal = await listening(undefined)
    await normal.speak(600, 'I would like a table by the window')
    await normal.silence(QUICK_CAP_MS + 100)
    expect(normal.session.state).toBe('maybeDone')
    const quick = await listening(dials({ patience: { level: 'quick' } }))
    await quick.speak(600, 'I would like a table by the window')
    await quick.silence(QUICK_CAP_MS + 100)
    expect(quick.customer).toEqual(['I would like a table by the window'])
    const trailing = await listening(dials({ patience: { level: 'quick' } }))
    await trailing.speak(600, 'I would like a table and')
    await trailing.silence(QUICK_CAP_MS + 200)
    expect(trailing.session.state).toBe('maybeDone')
    expect(trailing.context().waitMs).toBe(TRAILING_WAIT_MS)
  })
})

/** 141 characters: 2.8 s of the harness's speech at 20 ms a character. */
const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven.'
const MS_PER_CHAR = 20

/** The opening plays for a second, then the caller says `words` over it for `ms`. */
async function overTheOpening(d: VoiceDials | undefined, ms: number, words: string) {
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR, ...(d ? { line: { dials: d } } : {}) })
  h.session.start(8000)
  await flush()
  await h.silence(1_000)
  expect(h.session.state).toBe('opening')
  await h.speak(ms, words)
  return h
}
const clears = (h: ReturnType<typeof turnHarness>) => h.frames.filter((f) => f.kind === 'clear').length

describe('interruptions', () => {
  test('a normal agent stops for "Stop." and answers it', async () => {
    const h = await overTheOpening(undefined, 400, 'Stop.')
    expect(clears(h)).toBe(1)
    await h.silence(TRAILING_WAIT_MS)
    expect(h.customer).toEqual(['Stop.'])
  })

  test('an agent with interruptions off talks through "Stop.": no clear, its opening whole, the words let go', async () => {
    const h = await overTheOpening(dials({ interruptions: { enabled: false } }), 400, 'Stop.')
    expect(clears(h)).toBe(0)
    expect(h.session.state).toBe('opening')
    await h.silence(OPENING.length * MS_PER_CHAR)
    expect(clears(h)).toBe(0)
    expect(h.agent).toEqual([OPENING])
    expect(h.customer).toEqual([])
    expect(h.session.state).toBe('listening')
  })

  test('a minimum speech duration: shorter speech over the agent does not stop it, longer does', async () => {
    const d = dials({ interruptions: { minSpeechMs: 500 } })
    const short = await overTheOpening(d, 300, 'mhm')
    expect(clears(short)).toBe(0)
    expect(short.session.state).toBe('opening')
    const long = await overTheOpening(d, 700, 'Sorry, can I ask something?')
    expect(clears(long)).toBe(1)
    expect(long.session.state).toBe('interrupted')
    // With no dial the short one stops it.
    expect(clears(await overTheOpening(undefined, 300, 'mhm'))).toBe(1)
  })

  test('minimum words: fewer words over the agent and it resumes its sentence instead of answering them', async () => {
    const few = await overTheOpening(dials({ interruptions: { minWords: 3 } }), 400, 'No, wait.')
    await few.silence(TRAILING_WAIT_MS + OPENING.length * MS_PER_CHAR)
    expect(few.whys).toContain('"No, wait." was a backchannel: the agent resumes its sentence')
    expect(few.customer).toEqual([])
    expect(few.written).toEqual([])
    expect(`${few.agent[0]} ${few.agent[1]}`).toBe(OPENING)
    const any = await overTheOpening(undefined, 400, 'No, wait.')
    await any.silence(TRAILING_WAIT_MS)
    expect(any.customer).toEqual(['No, wait.'])
  })

  test("the agent's own backchannel words resume its sentence too", async () => {
    const own = await overTheOpening(dials({ interruptions: { backchannels: ['Sounds lovely'] } }), 500, 'Sounds lovely!')
    await own.silence(TRAILING_WAIT_MS + OPENING.length * MS_PER_CHAR)
    expect(own.whys).toContain('"Sounds lovely!" was a backchannel: the agent resumes its sentence')
    expect(own.customer).toEqual([])
    const none = await overTheOpening(undefined, 500, 'Sounds lovely!')
    await none.silence(TRAILING_WAIT_MS)
    expect(none.customer).toEqual(['Sounds lovely!'])
  })
})

describe('speed', () => {
  test("the sandbox's formant voice speaks faster at a higher speed, as long at the engine's own", async () => {
    const tts = new SandboxTts()
    const length = async (speed?: number | null) => {
      let n = 0
      for await (const pcm of tts.synthesize('Thank you for calling the bakery.', { voice: 'aria', language: 'en', speed })) n += pcm.length
      return n
    }
    const own = await length(null)
    expect(await length(1)).toBe(own)
    expect(await length(1.2)).toBeCloseTo(own / 1.2, 0)
  })

  /** A speech engine that keeps what it was asked. */
  function asking() {
    const asked: SynthesisOptions[] = []
    const tts: TextToSpeech = {
      name: 'asked',
      sampleRate: 8000,
      async *synthesize(text, options) {
        asked.push(options)
        yield new Int16Array(text.length * 8).fill(500)
      },
    }
    return { tts, asked }
  }

  test("the agent's speed reaches the speech engine with every line; with none, none is asked for", async () => {
    const fast = asking()
    const h = turnHarness({ tts: fast.tts, opening: 'Hello there.', line: { dials: dials({ speed: 1.15 }) } })
    h.session.start(8000)
    await h.silence(600)
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(600)
    expect(h.agent).toEqual(['Hello there.', 'We open at eight on Sundays.'])
    expect(fast.asked.length).toBeGreaterThanOrEqual(2)
    expect(fast.asked.map((o) => o.speed)).toEqual(fast.asked.map(() => 1.15))
    const own = asking()
    turnHarness({ tts: own.tts, opening: 'Hello there.' }).session.start(8000)
    await flush()
    expect(own.asked.map((o) => o.speed ?? null)).toEqual([null])
  })
})
