/**
 * Interruption as one signal (interrupt-signal.ts): whatever the chart decides — the caller spoke
 * over the agent (stop), the agent resumes its sentence after a backchannel (resume with the rest),
 * a hand-off holds the agent (pause) and is called off (resume) — every stage of the pipeline
 * takes the same signal, from the line back, and the line hears the `clear` of a stop first.
 */
import { expect, test } from 'bun:test'
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import type { Interruption } from '../../src/voice/interrupt-signal'
import { VOICE_LINES } from '../../src/voice/phrases'
import type { StageName } from '../../src/voice/pipeline'
import { AgentEcho, SILENT_DB } from '../../src/voice/turn-cues/agent-echo'
import { flush, type TurnHarness, turnHarness } from '../support/turn-harness'

const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven.'
/** 20 ms of the harness's speech a character: the opening plays 2.8 s. */
const MS_PER_CHAR = 20

/** Each stage's signals as it took them, in the order taken (what it does with them still done). */
function watchStages(h: TurnHarness): { stage: StageName; signal: Interruption }[] {
  const taken: { stage: StageName; signal: Interruption }[] = []
  for (const { name, stage } of h.session.pipeline.stages) {
    const handle = stage.interrupted.bind(stage)
    stage.interrupted = (signal: Interruption) => {
      taken.push({ stage: name, signal })
      handle(signal)
    }
  }
  return taken
}

const FROM_THE_LINE_BACK: StageName[] = ['agentEcho', 'playout', 'textToSpeech', 'agent', 'speechToText', 'callerAudio']

test('barge-in and a resumed sentence: every stage takes the stop, then the resume with the rest', async () => {
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR })
  const taken = watchStages(h)
  h.session.start(8000)
  await flush()
  await h.silence(1_000)
  await h.speak(300, 'mhm')
  expect(h.session.state).toBe('interrupted')
  expect(taken.map((t) => t.stage)).toEqual(FROM_THE_LINE_BACK)
  expect(taken.every((t) => t.signal.kind === 'stop')).toBe(true)
  expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
  // The echo reference is cut where the line dropped the agent's audio: what follows is the caller.
  const now = h.clock.now()
  expect(h.session.pipeline.stage('agentEcho').loudest(now, now + 1_000)).toBe(SILENT_DB)
  const rest = h.context().resume
  expect(rest.length).toBeGreaterThan(0)

  taken.length = 0
  await h.silence(TRAILING_WAIT_MS + 500)
  expect(h.whys).toContain('"mhm" was a backchannel: the agent resumes its sentence')
  expect(taken.map((t) => t.stage)).toEqual(FROM_THE_LINE_BACK)
  expect(taken.every((t) => t.signal.kind === 'resume' && t.signal.rest === rest)).toBe(true)
  await h.session.close()
})

test('a hand-off: every stage takes the pause, and the resume when it is called off', async () => {
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR })
  const taken = watchStages(h)
  h.session.start(8000)
  await flush()
  await h.silence(500)
  const handedOff = h.session.handingOff()
  expect(taken.map((t) => t.stage)).toEqual(FROM_THE_LINE_BACK)
  expect(taken.every((t) => t.signal.kind === 'pause')).toBe(true)
  // The opening's first sentence plays out; the hand-off is ready then.
  let ready = false
  void handedOff.then(() => (ready = true))
  for (let i = 0; i < 200 && !ready; i++) await h.silence(20)
  expect(ready).toBe(true)

  taken.length = 0
  h.session.handOffFailed()
  expect(taken.map((t) => t.stage)).toEqual(FROM_THE_LINE_BACK)
  expect(taken.every((t) => t.signal.kind === 'resume' && t.signal.rest === null)).toBe(true)
  await h.session.close()
})

test('a goodbye over the agent: every stage takes the end, and the chart hears of no barge-in', async () => {
  const logs: string[] = []
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR, line: { maxCallSeconds: 1, log: (_level, message) => void logs.push(message) } })
  const taken = watchStages(h)
  const told: string[] = []
  const tell = h.session.chart.send.bind(h.session.chart)
  h.session.chart.send = (event) => {
    told.push(event.type)
    tell(event)
  }
  h.session.start(8000)
  await flush()
  await h.silence(500)
  await h.silence(600)
  expect(h.context().why).toBe('the call reached its length limit')
  expect(taken.map((t) => t.stage)).toEqual(FROM_THE_LINE_BACK)
  expect(taken.every((t) => t.signal.kind === 'end')).toBe(true)
  expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
  // The goodbye plays out (simulated time): the call ends on it.
  for (let i = 0; i < 100 && h.ended.length === 0; i++) await h.silence(100)
  expect(h.agent.at(-1)).toBe(VOICE_LINES.timeLimit)
  expect(told).not.toContain('agent.stopped')
  expect(logs.filter((m) => m.includes('barge-in') || m.includes('over the agent'))).toEqual([])
})

test('the echo reference is cut where a stop or an end drops the line, and kept through a pause or a resume', () => {
  let now = 0
  const echo = new AgentEcho(() => now)
  const second = new Int16Array(8000).fill(8000)
  const signals: Interruption[] = [{ kind: 'pause' }, { kind: 'resume', rest: null }, { kind: 'stop' }, { kind: 'end' }]
  for (const signal of signals) {
    echo.played(second, 8000, now)
    now += 500
    echo.interrupted(signal)
    const kept = echo.loudest(now, now + 400) > SILENT_DB
    expect({ signal: signal.kind, kept }).toEqual({ signal: signal.kind, kept: signal.kind === 'pause' || signal.kind === 'resume' })
    now += 1_000
  }
})
