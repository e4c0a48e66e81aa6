/**
 * Speech over the agent is judged after the agent has gone quiet (src/voice/interruption.ts),
 * stepped on a simulated clock (test/support/turn-harness.ts): a short "mhm" resumes the sentence
 * from where the caller last heard it even when the engine garbles it (pocketsphinx hears "i
 * can"), and is not answered; a stop word or speech past a backchannel's length takes the turn.
 * Each call counts how its speech over the agent ended.
 */
import { describe, expect, test } from 'bun:test'
import type { OverlapCounts } from '../../machines/voice-turn'
import { MAX_BACKCHANNEL_MS } from '../../src/voice/interruption'
import { flush, turnHarness } from '../support/turn-harness'

/** 141 characters: 2.8 s of the harness's speech at 20 ms a character. */
const OPENING = 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven.'
const MS_PER_CHAR = 20
/** The caller speaks this far into the opening as they hear it. */
const CUT_IN_MS = 1_000
/** Long enough for any end-of-turn wait (1.5 s), the final, and the rest of the opening to play. */
const AFTER_MS = 1_500 + OPENING.length * MS_PER_CHAR

/** The opening plays for CUT_IN_MS, then the caller says `words` for `ms` over it; `wordless`: the engine's words do not judge turns (pocketsphinx). */
async function overTheOpening(ms: number, words: string, wordless: boolean, soundsLike?: (text: string, phrases: readonly string[]) => boolean) {
  const counts: OverlapCounts[] = []
  const h = turnHarness({ opening: OPENING, msPerChar: MS_PER_CHAR, noTurnCues: wordless, line: { overlaps: (c) => counts.push(c) }, ...(soundsLike ? { soundsLike } : {}) })
  h.session.start(8000)
  await flush()
  await h.silence(CUT_IN_MS)
  await h.speak(ms, words)
  return { h, counts }
}

/** The agent's audio sent after the first `clear`, before the caller's turn was decided. */
const audioAfterClear = (h: ReturnType<typeof turnHarness>, upTo: number) => h.frames.slice(h.frames.findIndex((f) => f.kind === 'clear') + 1, upTo).filter((f) => f.kind === 'audio').length

describe('a backchannel never costs the caller the agent’s answer', () => {
  test('a short "mhm" the engine hears as "i can" (no words to trust): quiet at once, then the same sentence from the heard point, not answered, counted resumed', async () => {
    const { h, counts } = await overTheOpening(300, 'i can', true)
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
    expect(h.session.state).toBe('interrupted')
    // Quiet: nothing of the agent's goes out while the speech is judged.
    expect(audioAfterClear(h, h.frames.length)).toBe(0)
    const rest = h.context().resume
    expect(OPENING.endsWith(rest) && rest.length > 0).toBe(true)
    await h.silence(AFTER_MS)
    expect(h.whys).toContain(`"i can" was a backchannel (300 ms of speech, within a backchannel's ${MAX_BACKCHANNEL_MS.wordless} ms): the agent resumes its sentence`)
    expect(h.asked).toEqual([])
    expect(h.customer).toEqual([])
    expect(h.agent.length).toBe(2)
    expect(`${h.agent[0]} ${h.agent[1]}`).toBe(OPENING)
    expect(counts.at(-1)).toEqual({ resumed: 1, taken: 0, talkedOver: 0 })
  })

  test('"stop." with a vendor’s words, short as a backchannel: the turn is taken and answered, counted taken', async () => {
    const { h, counts } = await overTheOpening(260, 'stop.', false)
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
    await h.silence(AFTER_MS)
    expect(h.customer).toEqual(['stop.'])
    expect(h.agent.at(-1)).toBe('We open at eight on Sundays.')
    expect(counts.at(-1)).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
  })

  test('"stop" heard by an engine whose words do not judge turns still takes the turn', async () => {
    const { h, counts } = await overTheOpening(260, 'stop', true)
    await h.silence(AFTER_MS)
    expect(h.customer).toEqual(['stop'])
    expect(counts.at(-1)).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
  })

  test('"Stop." heard as "top" by an engine whose words do not judge turns: it sounds like a stop word, and takes the turn', async () => {
    const asked: string[] = []
    const { h, counts } = await overTheOpening(260, 'top', true, (text, phrases) => {
      asked.push(text)
      return text === 'top' && phrases.includes('stop')
    })
    await h.silence(AFTER_MS)
    expect(asked).toEqual(['top'])
    expect(h.customer).toEqual(['top'])
    expect(counts.at(-1)).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
  })

  test('speech past a backchannel’s length takes the turn as it passes it, whatever the garbled words', async () => {
    const { h, counts } = await overTheOpening(1_200, 'yeah okay right sure', true)
    expect(h.whys).toContain(`the caller spoke over the agent past a backchannel's ${MAX_BACKCHANNEL_MS.wordless} ms: the turn is theirs`)
    await h.silence(AFTER_MS)
    expect(h.customer).toEqual(['yeah okay right sure'])
    expect(h.agent.at(-1)).toBe('We open at eight on Sundays.')
    expect(counts.at(-1)).toEqual({ resumed: 0, taken: 1, talkedOver: 0 })
  })

  test('"Okay, yeah." over a second of speech, with a vendor’s words: its words decide, the agent resumes', async () => {
    const { h, counts } = await overTheOpening(1_000, 'Okay, yeah.', false)
    await h.silence(AFTER_MS)
    expect(h.customer).toEqual([])
    expect(`${h.agent[0]} ${h.agent[1]}`).toBe(OPENING)
    expect(counts.at(-1)).toEqual({ resumed: 1, taken: 0, talkedOver: 0 })
  })
})
