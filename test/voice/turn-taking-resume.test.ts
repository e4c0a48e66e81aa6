/**
 * The chart's decisions when the caller speaks over the agent, stepped on a simulated clock (no
 * real time passes; test/support/turn-harness.ts): the agent stops at once (`clear`) and the
 * chart says why; a backchannel or a noise that stopped it makes it resume from where the caller
 * last heard it (the echoed marks tell), the transcript keeping what was heard; a real
 * interruption is answered instead; on a line no agent serves, speech over it is let go.
 */
import { describe, expect, test } from 'bun:test'
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import { VOICE_LINES } from '../../src/voice/phrases'
import { flush, turnHarness } from '../support/turn-harness'

/** 141 characters: 2.8 s of the harness's speech at 20 ms a character. */
const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven.'
const MS_PER_CHAR = 20
/** The caller speaks this far into the opening as they hear it. */
const CUT_IN_MS = 1_000

/** The opening plays for CUT_IN_MS, then the caller says `words` for `ms` over it (the engine finalises `final`). */
async function overTheOpening(ms: number, words: string, final = words) {
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR })
  h.session.start(8000)
  await flush()
  await h.silence(CUT_IN_MS)
  expect(h.session.state).toBe('opening')
  await h.speak(ms, words, final)
  return h
}

const clears = (h: ReturnType<typeof turnHarness>) => h.frames.filter((f) => f.kind === 'clear').length

describe('speech over the agent', () => {
  test('a backchannel stops the agent, which then resumes from where the caller last heard it; the transcript keeps what was heard', async () => {
    const h = await overTheOpening(300, 'mhm')
    expect(clears(h)).toBe(1)
    expect(h.session.state).toBe('interrupted')
    expect(h.context().why).toBe('the caller spoke over the agent: it stopped')
    // The rest of what the agent meant to say, from the last word the caller heard.
    const rest = h.context().resume
    expect(rest.length).toBeGreaterThan(0)
    expect(OPENING.endsWith(rest)).toBe(true)
    // The caller's turn ends on "mhm": the agent says the rest, and nothing is asked of the model.
    await h.silence(TRAILING_WAIT_MS + rest.length * MS_PER_CHAR + 500)
    expect(h.states).toEqual(['opening', 'interrupted', 'maybeDone', 'thinking', 'resuming', 'speaking', 'listening'])
    expect(h.whys).toContain('"mhm" was a backchannel: the agent resumes its sentence')
    expect(h.asked).toEqual([])
    expect(h.customer).toEqual([])
    // What the caller heard: the opening up to the cut, at a whole word, then the rest.
    const [heard, resumed] = h.agent
    expect(h.agent.length).toBe(2)
    expect(OPENING.startsWith(heard!)).toBe(true)
    expect([' ', ',', '.'].includes(OPENING[heard!.length]!)).toBe(true)
    // About as much as had played when the caller's speech stopped it (CUT_IN_MS and the detector's 64 ms).
    expect(heard!.length).toBeGreaterThan((CUT_IN_MS - 300) / MS_PER_CHAR)
    expect(heard!.length).toBeLessThan((CUT_IN_MS + 300) / MS_PER_CHAR)
    expect(resumed).toBe(rest)
    expect(`${heard} ${resumed}`).toBe(OPENING)
  })

  test('a noise (no words) that stopped the agent: it resumes too', async () => {
    const h = await overTheOpening(200, '', '')
    expect(clears(h)).toBe(1)
    await h.silence(TRAILING_WAIT_MS + OPENING.length * MS_PER_CHAR)
    expect(h.whys).toContain('noise, not words, stopped the agent: it resumes its sentence')
    expect(h.agent.length).toBe(2)
    expect(`${h.agent[0]} ${h.agent[1]}`).toBe(OPENING)
    expect(h.session.state).toBe('listening')
  })

  test('a real interruption is answered, not resumed', async () => {
    const h = await overTheOpening(600, 'Sorry, can I ask something?')
    expect(clears(h)).toBe(1)
    await h.silence(TRAILING_WAIT_MS + 500)
    expect(h.whys).toContain('the caller finished their turn: the agent answers')
    expect(h.customer).toEqual(['Sorry, can I ask something?'])
    expect(h.agent.length).toBe(2)
    expect(OPENING.startsWith(h.agent[0]!)).toBe(true)
    expect(h.agent[0]!.length).toBeLessThan(OPENING.length)
    expect(h.agent[1]).toBe('We open at eight on Sundays.')
    expect(h.session.state).toBe('listening')
  })

  test('the resumed sentence is itself stopped by a second interruption, and what was heard of it is kept', async () => {
    const h = await overTheOpening(300, 'mhm')
    // The resume starts after the turn's wait; the caller cuts in again half a second into it.
    await h.silence(TRAILING_WAIT_MS + 600)
    expect(h.session.state).toBe('speaking')
    await h.speak(600, 'Wait, which address?')
    expect(clears(h)).toBe(2)
    await h.silence(TRAILING_WAIT_MS + 500)
    expect(h.customer).toEqual(['Wait, which address?'])
    const [opening, resumed, answer] = h.agent
    expect(h.agent.length).toBe(3)
    expect(OPENING.startsWith(opening!)).toBe(true)
    // Only the part of the resumed rest that played before the second cut.
    expect(OPENING.includes(resumed!)).toBe(true)
    expect(`${opening} ${resumed}`.length).toBeLessThan(OPENING.length)
    expect(answer).toBe('We open at eight on Sundays.')
  })

  test('on a line no agent serves, speech over its one line does not stop it and is let go; the line ends', async () => {
    const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR, line: { unavailable: 'nothing is published' } })
    h.session.start(8000)
    await flush()
    await h.silence(500)
    await h.speak(400, 'Hello? Anyone there?')
    const before = h.finalized()
    await h.silence(600)
    // Let go: the engine's words were dropped (finalised and forgotten), no turn was taken.
    expect(h.finalized()).toBeGreaterThan(before)
    expect(clears(h)).toBe(0)
    expect(h.customer).toEqual([])
    await h.silence(VOICE_LINES.unavailable.length * MS_PER_CHAR)
    expect(h.agent).toEqual([VOICE_LINES.unavailable])
    expect(h.ended).toEqual([{ hangup: 'answered', error: 'nothing is published' }])
  })
})
