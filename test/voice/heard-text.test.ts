/** What the caller heard of a sentence cut part way: by the engine's word timings where it gave them, else by the share of its audio. */
import { describe, expect, test } from 'bun:test'
import { cutAt, type Sentence } from '../../src/voice/heard-text'

describe('cutAt', () => {
  // The first word is short and the last long: a cut by the share of characters misplaces it.
  const text = 'I can book   you extraordinarily quickly.'
  const words = [{ end: 800 }, { end: 2400 }, { end: 4000 }, { end: 5600 }, { end: 14_000 }, { end: 20_000 }]

  test('with word timings: the words whose audio played whole, as the text writes them', () => {
    const s: Sentence = { text, samples: 20_000, complete: true, words }
    expect(cutAt(s, 4_000)).toBe('I can book')
    expect(cutAt(s, 5_599)).toBe('I can book')
    expect(cutAt(s, 5_600)).toBe('I can book   you')
    expect(cutAt(s, 700)).toBe('')
    expect(cutAt(s, 20_000)).toBe(text)
  })

  test('without them: as far into the text as into the audio', () => {
    const s: Sentence = { text, samples: 20_000, complete: true }
    expect(cutAt(s, 4_000)).toBe('I can')
  })
})
