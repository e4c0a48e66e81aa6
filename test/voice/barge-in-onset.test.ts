/**
 * The barge-in rule (machines/voice-turn-setup.ts, its table) row by row: what the caller's audio
 * over the agent measures (turn-cues/onset.ts against the agent's audio as it played,
 * turn-cues/agent-echo.ts), what the chart decides on it, and a voice session on a simulated clock
 * (test/support/turn-harness.ts) whose caller's line carries the agent's own audio back at -20 dB,
 * as a speakerphone does: the agent goes on; the caller's own voice stops it.
 */
import { describe, expect, test } from 'bun:test'
import { createActor, SimulatedClock } from 'xstate'
import { ECHO_RETURN_LOSS_DB, MIN_INTERRUPTION_MS, turnState, type VoiceTurnEvent, voiceTurnMachine } from '../../machines/voice-turn'
import { AgentEcho, SILENT_DB } from '../../src/voice/turn-cues/agent-echo'
import { ECHO_LOOKBACK_MS, OnsetCues, type OnsetWindow } from '../../src/voice/turn-cues/onset'
import { flush, turnHarness } from '../support/turn-harness'

const RATE = 8_000
/** A vowel-like tone (150 Hz and its harmonics) at `db` dBFS, `ms` long. */
function voice(ms: number, db: number): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000)
  const amp = (32768 * 10 ** (db / 20) * Math.SQRT2) / Math.sqrt(0.7 ** 2 + 0.3 ** 2)
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE
    out[i] = Math.round(amp * (0.7 * Math.sin(2 * Math.PI * 150 * t) + 0.3 * Math.sin(2 * Math.PI * 450 * t)))
  }
  return out
}
const levelOf = (pcm: Int16Array) => 20 * Math.log10(Math.sqrt(pcm.reduce((n, x) => n + x * x, 0) / pcm.length) / 32768)

describe("the agent's audio as it played (the echo reference)", () => {
  test('the loudest 20 ms playing between two moments; a clear drops what was scheduled after it', () => {
    const echo = new AgentEcho(() => 0)
    echo.played(voice(100, -30), RATE, 0)
    echo.played(voice(100, -10), RATE, 100)
    expect(echo.loudest(0, 90)).toBeCloseTo(levelOf(voice(100, -30)), 0)
    expect(echo.loudest(0, 200)).toBeCloseTo(-10, 0)
    expect(echo.loudest(300, 400)).toBe(SILENT_DB)
    echo.cut(100)
    expect(echo.loudest(0, 200)).toBeCloseTo(-30, 0)
  })

  test('kept long enough for a VAD 2 s behind: what played is still known once a second more is scheduled ahead', () => {
    const echo = new AgentEcho(() => 0)
    // Scheduled 100 ms at a time up to 3.5 s: the line is at 2.5 s, the VAD judges what arrived at 0.3 s.
    for (let at = 0; at < 3_500; at += 100) echo.played(voice(100, -12), RATE, at)
    expect(echo.loudest(300 - ECHO_LOOKBACK_MS, 300)).toBeCloseTo(-12, 0)
  })
})

describe("the onset's measurements", () => {
  /** The caller's line: `pcm` arriving as one VAD window of 32 ms ending at `at`, the agent having played `agent` from 0. */
  function measure(pcm: Int16Array, agent: Int16Array | null, at: number): OnsetWindow {
    const echo = new AgentEcho(() => 0)
    if (agent) echo.played(agent, RATE, 0)
    const cues = new OnsetCues((from, to) => echo.loudest(from, to))
    const base = cues.push(pcm, RATE)
    cues.window(base, pcm.length, RATE, true, 32, at)
    return cues.onset[0]!
  }

  test("the agent's own audio 20 dB down is far under it; the caller as loud as the agent is not", () => {
    const agent = voice(1_000, -16)
    expect(measure(voice(32, -36), agent, 500).overAgentDb).toBeLessThanOrEqual(-ECHO_RETURN_LOSS_DB)
    expect(measure(voice(32, -18), agent, 500).overAgentDb).toBeGreaterThan(-ECHO_RETURN_LOSS_DB)
  })

  test('the agent silent for longer than the echo can take: anything is the caller', () => {
    expect(measure(voice(32, -40), null, 500).overAgentDb).toBe(120)
    expect(measure(voice(32, -40), voice(100, -10), 100 + ECHO_LOOKBACK_MS + 100).overAgentDb).toBe(120)
  })

  test('a window without speech ends the stretch', () => {
    const cues = new OnsetCues(() => SILENT_DB)
    const base = cues.push(voice(96, -20), RATE)
    cues.window(base, 256, RATE, true, 32, 32)
    cues.window(base, 512, RATE, true, 32, 64)
    expect(cues.onset.length).toBe(2)
    cues.window(base, 768, RATE, false, 32, 96)
    expect(cues.onset).toEqual([])
  })
})

describe('the chart decides on them', () => {
  const own: OnsetWindow = { ms: 32, overAgentDb: -3 }
  const echo: OnsetWindow = { ms: 32, overAgentDb: -(ECHO_RETURN_LOSS_DB + 5) }
  const windows = (w: OnsetWindow, ms: number) => Array.from({ length: Math.ceil(ms / w.ms) }, () => w)
  function opening(unavailable = false) {
    const actor = createActor(voiceTurnMachine, { input: { callLimitMs: 600_000, silenceMs: 30_000, unavailable }, clock: new SimulatedClock() })
    actor.start()
    return { send: (e: VoiceTurnEvent) => actor.send(e), state: () => turnState(actor.getSnapshot().value) }
  }

  test("the agent's echo, however long, does not stop it", () => {
    const c = opening()
    c.send({ type: 'speech.start', onset: windows(echo, 64) })
    c.send({ type: 'speech.onset', onset: windows(echo, 900) })
    expect(c.state()).toBe('opening')
  })

  test("the caller's own speech, MIN_INTERRUPTION_MS of it, stops the agent at its start", () => {
    const c = opening()
    c.send({ type: 'speech.start', onset: windows(own, MIN_INTERRUPTION_MS) })
    expect(c.state()).toBe('interrupted')
  })

  test('the caller starting to talk over their own echo: stopped once their speech is long enough, window by window', () => {
    const c = opening()
    c.send({ type: 'speech.start', onset: windows(echo, 64) })
    c.send({ type: 'speech.onset', onset: [...windows(echo, 64), own] })
    expect(c.state()).toBe('opening')
    c.send({ type: 'speech.onset', onset: [...windows(echo, 64), ...windows(own, MIN_INTERRUPTION_MS)] })
    expect(c.state()).toBe('interrupted')
  })

  test('on a line no agent serves, nothing stops it', () => {
    const c = opening(true)
    c.send({ type: 'speech.start', onset: windows(own, 1_000) })
    expect(c.state()).toBe('opening')
  })
})

describe('a voice session whose caller is on a speakerphone', () => {
  /** 141 characters: 2.8 s of the harness's speech at 20 ms a character. */
  const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven.'

  test("the agent's own audio coming back 20 dB down does not stop it and reaches no decoder; the caller's voice over it does both", async () => {
    const h = turnHarness({ opening: OPENING, msPerChar: 20 })
    h.session.start(8000)
    await flush()
    // The line played the agent's audio as sent; it comes back 20 dB down a frame later.
    const played: Int16Array[] = []
    let cursor = 0
    const echoFrame = () => {
      const audio = h.frames.filter((f) => f.kind === 'audio').flatMap((f) => Array.from((f as { pcm: Int16Array }).pcm))
      const out = new Int16Array(160)
      for (let i = 0; i < 160; i++) out[i] = Math.round((audio[cursor - 160 + i] ?? 0) / 10)
      cursor += 160
      played.push(out)
      return out
    }
    const frame = async (pcm: Int16Array) => {
      h.session.frame({ kind: 'audio', pcm, sampleRate: 8000, chunk: 0, timestamp: 0 })
      await flush()
      h.clock.increment(20)
      await flush()
    }
    for (let t = 0; t < 1_500; t += 20) await frame(echoFrame())
    expect(played.some((f) => f[0] !== 0)).toBe(true)
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(0)
    expect(h.session.state).toBe('opening')
    // The VAD called the echo speech, but the speech-to-text engine was never told: no decoder taken.
    expect(h.speechWindows()).toBe(0)
    // The caller talks over it, as loud as the agent: stopped.
    for (let t = 0; t < 200; t += 20) {
      const mixed = echoFrame()
      for (let i = 0; i < 160; i++) mixed[i] = mixed[i]! + 500
      await frame(mixed)
    }
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
    expect(h.session.state).toBe('interrupted')
    expect(h.speechWindows()).toBeGreaterThan(0)
  })
})
