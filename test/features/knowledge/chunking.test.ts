import { describe, expect, test } from 'bun:test'
import { chunkText, PASSAGE_MAX_CHARS, PASSAGE_MIN_CHARS, PASSAGE_OVERLAP_CHARS } from '../../../src/features/knowledge/chunking'

/** Deterministic prose: numbered sentences so each one can be found again. */
function sentences(count: number, topic: string, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `Sentence ${from + i} explains one more detail about ${topic} for our customers.`)
}

describe('chunkText', () => {
  test('a short text is one passage, trimmed', () => {
    expect(chunkText('  We open at nine.  \n')).toEqual(['We open at nine.'])
  })

  test('empty or blank text gives no passages', () => {
    expect(chunkText('')).toEqual([])
    expect(chunkText(' \n\n \t ')).toEqual([])
  })

  test('long prose is cut on sentence boundaries within the size band, losing nothing', () => {
    const all = sentences(120, 'delivery')
    // Paragraphs of six sentences (~400 characters each).
    const paragraphs: string[] = []
    for (let i = 0; i < all.length; i += 6) paragraphs.push(all.slice(i, i + 6).join(' '))
    const passages = chunkText(paragraphs.join('\n\n'))
    expect(passages.length).toBeGreaterThan(5)
    for (const p of passages) expect(p.length).toBeLessThanOrEqual(PASSAGE_MAX_CHARS)
    for (const p of passages.slice(0, -1)) expect(p.length).toBeGreaterThanOrEqual(PASSAGE_MIN_CHARS)
    for (const p of passages) expect(p.trim().endsWith('.')).toBe(true) // whole sentences only
    for (const s of all) expect(passages.some((p) => p.includes(s))).toBe(true)
  })

  test('consecutive passages inside a section overlap by a sentence', () => {
    const passages = chunkText(sentences(60, 'refunds').join(' '))
    expect(passages.length).toBeGreaterThan(2)
    for (let i = 1; i < passages.length; i++) {
      const firstSentence = passages[i].split(/(?<=\.)\s/)[0]
      expect(firstSentence.length).toBeLessThanOrEqual(PASSAGE_OVERLAP_CHARS)
      expect(passages[i - 1].endsWith(firstSentence)).toBe(true)
    }
  })

  test('every section starts a new passage and continued passages repeat the heading', () => {
    const text = ['# Shipping', sentences(30, 'shipping').join(' '), '## Returns', 'Returns are free within 30 days.', 'How do I reset my password?', 'Use the link on the sign-in page.'].join('\n\n')
    const passages = chunkText(text)
    const shipping = passages.filter((p) => p.includes('about shipping'))
    expect(shipping.length).toBeGreaterThan(1)
    for (const p of shipping) expect(p.startsWith('Shipping\n')).toBe(true)
    expect(passages).toContain('Returns\nReturns are free within 30 days.')
    // FAQ pages title each answer with its question.
    expect(passages).toContain('How do I reset my password?\nUse the link on the sign-in page.')
  })

  test('a heading followed directly by a list keeps them together', () => {
    const passages = chunkText('Opening hours\n - Monday to Friday: 9 to 5\n - Saturday: 10 to 2')
    expect(passages).toEqual(['Opening hours\n- Monday to Friday: 9 to 5\n- Saturday: 10 to 2'])
  })

  test('short lines that only look like headings are kept as content', () => {
    const passages = chunkText('Price list\n\nBread 3 dollars\n\nCake 20 dollars\n\nCoffee 2 dollars').join('\n')
    for (const item of ['Price list', 'Bread 3 dollars', 'Cake 20 dollars', 'Coffee 2 dollars']) expect(passages).toContain(item)
  })

  test('a markdown heading directly above another only frames it', () => {
    expect(chunkText('# Help centre\n\n## Hours\n\nOpen nine to five.')).toEqual(['Hours\nOpen nine to five.'])
  })

  test('a run-on text without punctuation is still cut below the maximum', () => {
    const words = Array.from({ length: 2_000 }, (_, i) => `word${i}`).join(' ')
    const passages = chunkText(words)
    expect(passages.length).toBeGreaterThan(10)
    for (const p of passages) expect(p.length).toBeLessThanOrEqual(PASSAGE_MAX_CHARS)
    expect(passages.join(' ')).toContain('word1999')
  })

  test('Windows line endings and tabs are normalised', () => {
    expect(chunkText('Title\r\n\r\nFirst\tline.\r\nSecond line.')).toEqual(['Title\nFirst line.\nSecond line.'])
  })
})
