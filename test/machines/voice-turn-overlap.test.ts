/**
 * The voice-turn chart's decision on speech over the agent, row by row: the agent stops at once
 * (`interrupted.deciding`); speech running past a backchannel's length takes the turn as it passes
 * it (`interrupted.taken`), whatever its final words; otherwise the final words decide (the
 * session's rule, src/voice/interruption.ts). Each call counts how its speech over the agent
 * ended: resumed, taken, talked over.
 */
import { describe, expect, test } from 'bun:test'
import { OVERLAP_END_MS, type VoiceTurnEvent } from '../../machines/voice-turn'
import { chart, final, pause, START } from './voice-turn-harness'

const BOUND_MS = 800
/** Another window of the caller's own speech, `spokenMs` of it in the turn so far. */
const onset = (spokenMs: number): VoiceTurnEvent => ({ type: 'speech.onset', onset: [{ ms: 64, overAgentDb: 0 }], spokenMs })

/** A chart whose opening the caller cut into, with `resume` left to say. */
function cutIn(input = { backchannelMaxMs: BOUND_MS }) {
  const c = chart(input)
  c.send({ type: 'speech.start', onset: [{ ms: 64, overAgentDb: 0 }], spokenMs: 64 }, { type: 'agent.stopped', unheard: 'the rest of it.' })
  expect(c.value()).toEqual({ live: { turn: { interrupted: 'deciding' }, call: 'open', keypad: 'idle', answer: 'known', overlap: 'none' } })
  c.effects()
  return c
}

/** The caller's speech pauses, the turn's wait passes: the chart asks for the final words. */
function turnEnds(c: ReturnType<typeof chart>) {
  c.send(pause(c.now(), c.now(), 'okay', 100))
  c.advance(100)
  expect(c.state()).toBe('thinking')
  c.effects()
}

describe('the voice-turn chart: speech over the agent', () => {
  test('interrupted.deciding: speech up to the bound stays undecided; past it → taken, and a backchannel’s words then are answered, counted taken', () => {
    const c = cutIn()
    c.send(onset(BOUND_MS))
    expect(c.value()).toMatchObject({ live: { turn: { interrupted: 'deciding' } } })
    c.send(onset(BOUND_MS + 32))
    expect(c.value()).toMatchObject({ live: { turn: { interrupted: 'taken' } } })
    expect(c.context().taken).toBe(true)
    expect(c.context().why).toBe("the caller spoke over the agent past a backchannel's 800 ms: the turn is theirs")
    turnEnds(c)
    c.send(final('okay yeah okay', true))
    expect(c.state()).toBe('thinking')
    expect(c.effects()[0]).toStartWith('answer')
    expect(c.context().overlaps).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
    // The next turn starts undecided again.
    c.send({ type: 'reply.audio' }, { type: 'reply.done' })
    expect(c.context().taken).toBe(false)
  })

  test('a backchannel within the bound → resuming, counted resumed; the counts outlive the turn', () => {
    const c = cutIn()
    c.send(onset(300))
    turnEnds(c)
    c.send(final('mhm', true))
    expect(c.state()).toBe('resuming')
    expect(c.context().overlaps).toEqual({ resumed: 1, taken: 0, talkedOver: 0 })
    c.send({ type: 'reply.audio' }, { type: 'reply.done' })
    expect(c.state()).toBe('listening')
    expect(c.context().overlaps).toEqual({ resumed: 1, taken: 0, talkedOver: 0 })
  })

  test('words that are not a backchannel → answered, counted taken; a turn that stopped nothing is not counted', () => {
    const c = cutIn()
    turnEnds(c)
    c.send(final('stop.'))
    expect(c.effects()[0]).toStartWith('answer')
    expect(c.context().overlaps).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
    c.send({ type: 'reply.audio' }, { type: 'reply.done' }, START)
    turnEnds(c)
    c.send(final('What time do you open?'))
    expect(c.context().overlaps).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
  })

  test('with no bound given, only the words decide: no length takes the turn', () => {
    const c = cutIn({} as { backchannelMaxMs: number })
    c.send(onset(5_000))
    expect(c.value()).toMatchObject({ live: { turn: { interrupted: 'deciding' } } })
  })

  test('speech over the agent that did not stop it (its own echo) is let go, counted talked over; not on a line no agent serves', () => {
    const echo: VoiceTurnEvent = { type: 'speech.start', onset: [{ ms: 64, overAgentDb: -20 }] }
    const c = chart({ backchannelMaxMs: BOUND_MS })
    c.send(echo, pause(0, 0))
    expect(c.state()).toBe('opening')
    c.advance(OVERLAP_END_MS)
    expect(c.effects()).toEqual(['letGo'])
    expect(c.context().overlaps).toEqual({ resumed: 0, taken: 0, talkedOver: 1 })
    const off = chart({ unavailable: true })
    off.send(START, pause(0, 0))
    off.advance(OVERLAP_END_MS)
    expect(off.effects()).toEqual(['letGo'])
    expect(off.context().overlaps).toEqual({ resumed: 0, taken: 0, talkedOver: 0 })
  })
})
