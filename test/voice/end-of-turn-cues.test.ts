/**
 * The end-of-turn rules that read the caller's voice (src/voice/turn-cues/, end-of-turn.ts's second
 * input): one row of the rule table a test, on signals made here (glides of a pulse train, noise),
 * so every run hears the same samples.
 */
import { describe, expect, test } from 'bun:test'
import { endOfTurn, TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import { holdingWait, MAX_PAUSE_MS, MIN_PAUSE_MS, PAUSE_MARGIN_MS, PauseHistory } from '../../src/voice/turn-cues/pauses'
import { finalPitch, yin } from '../../src/voice/turn-cues/pitch'
import { type TurnCues, VoiceCues } from '../../src/voice/turn-cues/voice-cues'
import { HOSTED_WAITS, LOCAL_WAITS } from '../../src/voice/turn-waits'

const RATE = 8_000

/** A voiced sound: a glottal-like pulse train (rich in harmonics, as a voice on the phone) whose F0 glides from `fromHz` to `toHz`. */
function voice(ms: number, fromHz: number, toHz: number, level = 8_000): Int16Array {
  const n = Math.round((ms * RATE) / 1000)
  const out = new Int16Array(n)
  let phase = 0
  for (let i = 0; i < n; i++) {
    const f0 = fromHz + ((toHz - fromHz) * i) / n
    phase += f0 / RATE
    const p = phase % 1
    // A decaying pulse each period: harmonics a pitch tracker must not mistake for the fundamental.
    out[i] = Math.round(level * Math.exp(-p * 6) * Math.cos(2 * Math.PI * p * 3))
  }
  return out
}

function noise(ms: number, seed = 7): Int16Array {
  let a = seed
  const out = new Int16Array(Math.round((ms * RATE) / 1000))
  for (let i = 0; i < out.length; i++) {
    a = (a * 1_103_515_245 + 12_345) % 2 ** 31
    out[i] = Math.round(((a / 2 ** 31) * 2 - 1) * 6_000)
  }
  return out
}

const cues = (pitch: TurnCues['pitch'], pausesMs: number[] = [], semitones: number | null = null): TurnCues => ({ pitch, semitones, pausesMs })

describe('pitch at the end of the last voiced stretch', () => {
  test('YIN finds the fundamental of a pulse train, not a harmonic', () => {
    const frame = Float32Array.from(voice(40, 150, 150), (s) => s / 32_768)
    expect(Math.abs(yin(frame, RATE)! - 150)).toBeLessThan(3)
  })

  test('noise has no pitch', () => {
    expect(
      yin(
        Float32Array.from(noise(40), (s) => s / 32_768),
        RATE,
      ),
    ).toBeNull()
    expect(finalPitch(noise(700), RATE).pitch).toBe('unknown')
  })

  test('a glide down by 4 semitones over the last word is falling', () => {
    expect(finalPitch(voice(700, 200, 160), RATE).pitch).toBe('falling')
  })

  test('a level voice is level', () => {
    expect(finalPitch(voice(700, 180, 180), RATE).pitch).toBe('level')
  })

  test('a glide up by 4 semitones is rising', () => {
    expect(finalPitch(voice(700, 160, 200), RATE).pitch).toBe('rising')
  })

  test('a stretch too short to read is unknown', () => {
    expect(finalPitch(voice(60, 180, 180), RATE).pitch).toBe('unknown')
  })
})

describe("this caller's pauses (dynamic endpointing)", () => {
  test(`gaps under ${MIN_PAUSE_MS} ms (inside a word) and of ${MAX_PAUSE_MS} ms or more (between turns) are not pauses`, () => {
    const h = new PauseHistory()
    for (const ms of [120, 450, 1_600, 800, MAX_PAUSE_MS]) h.gap(ms)
    expect(h.recent).toEqual([450, 800])
  })

  test('until the caller has paused inside a turn, the holding wait is the fallback', () => {
    expect(holdingWait([], LOCAL_WAITS.holding, LOCAL_WAITS.holdingFloor, TRAILING_WAIT_MS)).toBe(LOCAL_WAITS.holding)
  })

  test("then it is the caller's longest pause plus the margin", () => {
    expect(holdingWait([600, 1_000], LOCAL_WAITS.holding, LOCAL_WAITS.holdingFloor, TRAILING_WAIT_MS)).toBe(1_000 + PAUSE_MARGIN_MS)
  })

  test('no shorter than the floor for a caller with short pauses, no longer than the cap', () => {
    expect(holdingWait([100, 150], 300, LOCAL_WAITS.holdingFloor, TRAILING_WAIT_MS)).toBe(LOCAL_WAITS.holdingFloor)
    expect(holdingWait([1_400, 1_300], LOCAL_WAITS.holding, LOCAL_WAITS.holdingFloor, TRAILING_WAIT_MS)).toBe(TRAILING_WAIT_MS)
  })

  test('the voice cues: pauses are measured between speech windows, the pitch read up to the last one', () => {
    const audio = new VoiceCues()
    // 20 ms frames with 32 ms windows would not line up; windows here are one a frame, as the energy VAD's.
    const push = (pcm: Int16Array, speech: boolean) => {
      const windows = []
      for (let end = 160; end <= pcm.length; end += 160) windows.push({ speech, ms: 20, end })
      audio.push(pcm, RATE, windows)
    }
    push(voice(500, 190, 190), true)
    push(new Int16Array(RATE * 0.6), false)
    push(voice(700, 200, 160), true)
    push(new Int16Array(RATE * 0.3), false)
    const c = audio.cues()
    expect(c.pausesMs).toEqual([600])
    expect(c.pitch).toBe('falling')
  })
})

describe('end of turn with the voice as a second input', () => {
  test('no words yet (pocketsphinx) and the voice falls: a complete turn, the short wait', () => {
    const j = endOfTurn('', TRAILING_WAIT_MS, cues('falling', [], -3.2), LOCAL_WAITS)
    expect(j).toMatchObject({ shape: 'complete', waitMs: LOCAL_WAITS.falling })
    expect(j.why).toContain('falls')
  })

  test('no words and the voice stays up (level): the caller holds the turn', () => {
    expect(endOfTurn('', TRAILING_WAIT_MS, cues('level'), LOCAL_WAITS)).toMatchObject({ shape: 'holding', waitMs: LOCAL_WAITS.holding })
  })

  test('a rise holds the turn as a level voice does', () => {
    expect(endOfTurn('', TRAILING_WAIT_MS, cues('rising'), LOCAL_WAITS)).toMatchObject({ shape: 'holding', waitMs: LOCAL_WAITS.holding })
  })

  test("holding, with this caller's pauses known: their longest pause plus the margin", () => {
    const j = endOfTurn('', TRAILING_WAIT_MS, cues('level', [700, 950]), LOCAL_WAITS)
    expect(j).toMatchObject({ shape: 'holding', waitMs: 950 + PAUSE_MARGIN_MS })
    expect(j.why).toContain('pauses up to 950 ms')
  })

  test("the agent's voice.endpointingMs caps a holding wait", () => {
    expect(endOfTurn('', 800, cues('level', [900]), LOCAL_WAITS).waitMs).toBe(800)
  })

  test('a voice too short or unvoiced to read leaves the words to decide', () => {
    expect(endOfTurn('', TRAILING_WAIT_MS, cues('unknown'), LOCAL_WAITS)).toMatchObject({ shape: 'unknown', waitMs: LOCAL_WAITS.unknown })
  })

  test('words that trail off win over a falling voice (a connective)', () => {
    expect(endOfTurn('I want to book a table and', TRAILING_WAIT_MS, cues('falling'))).toMatchObject({ shape: 'trailing', waitMs: TRAILING_WAIT_MS })
  })

  test('a question at its auxiliary and subject wins over a falling voice: its verb is to come', () => {
    expect(endOfTurn('What time do you', TRAILING_WAIT_MS, cues('falling', [], -2.2))).toMatchObject({ shape: 'trailing', waitMs: TRAILING_WAIT_MS })
    // A copula's question may be whole ("where are you"): the voice still decides there.
    expect(endOfTurn('when are you', TRAILING_WAIT_MS, cues('falling'))).toMatchObject({ shape: 'complete' })
  })

  test('half a number being read out wins over a falling voice (a digit group)', () => {
    expect(endOfTurn('my number is 415 555', TRAILING_WAIT_MS, cues('falling'))).toMatchObject({ shape: 'trailing', waitMs: TRAILING_WAIT_MS })
  })

  test('plainly complete words win over a level voice', () => {
    expect(endOfTurn('yes please', TRAILING_WAIT_MS, cues('level'))).toMatchObject({ shape: 'complete', waitMs: HOSTED_WAITS.complete })
  })

  test('a statement with no sign either way is decided by the voice', () => {
    expect(endOfTurn('the delivery never arrived', TRAILING_WAIT_MS, cues('falling'))).toMatchObject({ shape: 'complete' })
    expect(endOfTurn('the delivery never arrived', TRAILING_WAIT_MS, cues('level'))).toMatchObject({ shape: 'holding' })
  })

  test('without cues the rules are the words alone', () => {
    expect(endOfTurn('the delivery never arrived')).toMatchObject({ shape: 'neutral' })
  })
})
