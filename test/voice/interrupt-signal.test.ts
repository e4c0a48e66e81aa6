/**
 * Interruption as one signal (interrupt-signal.ts): whatever the chart decides — the caller spoke
 * over the agent (stop), the agent resumes its sentence after a backchannel (resume with the rest),
 * a hand-off holds the agent (pause) and is called off (resume) — every stage of the pipeline
 * takes the same signal, from the line back, and the line hears the `clear` of a stop first.
 */
import { expect, test } from 'bun:test'
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import type { Interruption } from '../../src/voice/interrupt-signal'
import type { StageName } from '../../src/voice/pipeline'
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

const FROM_THE_LINE_BACK: StageName[] = ['playout', 'textToSpeech', 'agent', 'speechToText', 'callerAudio']

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
