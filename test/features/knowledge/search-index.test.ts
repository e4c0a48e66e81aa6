import { describe, expect, test } from 'bun:test'
import { chunkText } from '../../../src/features/knowledge/chunking'
import { FOUND_SIMILARITY, normaliseTerm, PassageIndex, queryTerms } from '../../../src/features/knowledge/search-index'

// A small help-centre page for a fictional bakery with delivery.
const HELP_CENTRE = `# Sunrise Bakery help centre

Everything you need to know about ordering from Sunrise Bakery.

## Opening hours

Our shop on Market Street is open from 7 am to 7 pm Monday to Saturday, and from 8 am to 2 pm on Sundays. We are closed on public holidays. Phone orders are taken during opening hours only.

## Delivery

We deliver within 15 kilometres of the shop. Orders placed before 11 am are delivered the same day; later orders arrive the next morning. Delivery costs 3 dollars, and it is free for orders over 40 dollars. We do not deliver on Sundays.

## Refunds and returns

If something is wrong with your order, tell us within 48 hours and we will refund you in full or bake it again, whichever you prefer. Refunds go back to the card you paid with and usually take 3 to 5 working days to appear on your statement.

## Allergies

All our bread is baked in a kitchen that also handles nuts, sesame and gluten. We offer a gluten-free loaf on Fridays, but we cannot guarantee it is free of traces. Ask our staff for the ingredient list of any product.

## Custom cakes

Birthday and wedding cakes need at least five days of notice. A deposit of 30 percent confirms the order, and the design can be changed until two days before collection. Cake tastings are available on Wednesday afternoons by appointment.

## Gift cards

Gift cards are sold in the shop and online in amounts from 10 to 200 dollars. They are valid for two years and can be used for delivery orders too. Lost gift cards can be replaced if you still have the receipt.
`

const OTHER_DOC = `Loyalty programme

Every purchase earns one point per dollar. 100 points can be exchanged for a free loaf of bread or a coffee. Points expire after twelve months without a purchase.`

function indexOf(...docs: [id: string, title: string, text: string][]): PassageIndex {
  const index = new PassageIndex()
  for (const [documentId, title, text] of docs) {
    index.add(chunkText(text).map((t, i) => ({ id: `${documentId}-${i}`, documentId, title, text: t })))
  }
  return index
}

const index = indexOf(['help', 'Sunrise Bakery help centre', HELP_CENTRE], ['loyalty', 'Loyalty programme', OTHER_DOC])

describe('search ranking', () => {
  const cases: [question: string, answerStartsWith: string][] = [
    ['How long do refunds take?', 'Refunds and returns'],
    ['What time do you open on Sunday?', 'Opening hours'],
    ['How much is delivery?', 'Delivery'],
    ['Is the bread gluten free?', 'Allergies'],
    ['How much notice do you need for a wedding cake?', 'Custom cakes'],
    ['Do gift cards expire?', 'Gift cards'],
    ['When do my loyalty points expire?', 'Loyalty programme'],
  ]
  for (const [question, answer] of cases) {
    test(`"${question}" ranks the answering passage first`, () => {
      const [best] = index.search(question, 3)
      expect(best?.text.startsWith(answer)).toBe(true)
      expect(best.similarity).toBeGreaterThanOrEqual(FOUND_SIMILARITY)
    })
  }

  test('a half-answered question ranks its passage first without counting as found', () => {
    // The page says "we do not deliver on Sundays" but never mentions weekends.
    const [best] = index.search('Do you deliver on weekends?', 3)
    expect(best.text.startsWith('Delivery')).toBe(true)
    expect(best.similarity).toBeGreaterThan(0.2)
    expect(best.similarity).toBeLessThan(FOUND_SIMILARITY)
  })

  test('hits carry document, title, text and descending scores', () => {
    const hits = index.search('delivery orders gift cards', 5)
    expect(hits.length).toBeGreaterThan(1)
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score)
    expect(hits[0]).toMatchObject({ documentId: 'help', title: 'Sunrise Bakery help centre' })
    expect(hits[0].passageId).toMatch(/^help-\d+$/)
  })

  test('k limits the hits', () => {
    expect(index.search('orders', 1)).toHaveLength(1)
  })

  test('questions the knowledge does not cover stay below the found threshold', () => {
    for (const q of ['Do you sell cars?', 'Is there parking near the shop?', 'What is the wifi password?', 'Can I pay with crypto?']) {
      const best = Math.max(0, ...index.search(q, 5).map((h) => h.similarity))
      expect(best).toBeLessThan(FOUND_SIMILARITY)
    }
  })

  test('similarity is 1 when every informative word is in the passage', () => {
    expect(index.search('delivery costs', 1)[0].similarity).toBe(1)
  })

  test('typos and inflections still find the passage', () => {
    expect(index.search('delivry', 1)[0].text.startsWith('Delivery')).toBe(true)
    expect(index.search('refunded', 1)[0].text.startsWith('Refunds')).toBe(true)
    expect(index.search('tastings', 1)[0].text.startsWith('Custom cakes')).toBe(true)
  })

  test('a question made only of stop words finds nothing', () => {
    expect(index.search('what is it and how do you do that?', 5)).toEqual([])
  })
})

describe('index maintenance', () => {
  test('removing a document removes its passages from results', () => {
    const local = indexOf(['help', 'Help', HELP_CENTRE], ['loyalty', 'Loyalty programme', OTHER_DOC])
    const before = local.size
    expect(local.search('loyalty points', 1)[0].documentId).toBe('loyalty')
    local.removeDocument('loyalty')
    expect(local.size).toBe(before - chunkText(OTHER_DOC).length)
    expect(local.search('loyalty points', 5).every((h) => h.documentId !== 'loyalty')).toBe(true)
    local.removeDocument('loyalty') // twice is harmless
  })

  test('adding the same passages again is harmless', () => {
    const local = indexOf(['loyalty', 'Loyalty programme', OTHER_DOC])
    const size = local.size
    const chars = local.chars
    local.add(chunkText(OTHER_DOC).map((t, i) => ({ id: `loyalty-${i}`, documentId: 'loyalty', title: 'x', text: t })))
    expect(local.size).toBe(size)
    expect(local.chars).toBe(chars)
  })

  test('removing every document leaves an empty index that still answers', () => {
    const local = indexOf(['loyalty', 'Loyalty programme', OTHER_DOC])
    local.removeDocument('loyalty')
    expect(local.size).toBe(0)
    expect(local.chars).toBe(0)
    expect(local.search('points', 5)).toEqual([])
  })
})

describe('term normalisation', () => {
  test('drops stop words and one-letter fragments, lower-cases', () => {
    expect(queryTerms("How do I get a REFUND if it doesn't arrive?")).toEqual(['refund', 'arrive'])
  })

  test('strips common inflections', () => {
    const pairs: [string, string][] = [
      ['refunds', 'refund'],
      ['policies', 'policy'],
      ['charges', 'charge'],
      ['shipping', 'ship'],
      ['shipped', 'ship'],
      ['booking', 'book'],
      ['calling', 'call'],
      ['address', 'address'],
      ['status', 'status'],
      ['2024', '2024'],
    ]
    for (const [word, stem] of pairs) expect(normaliseTerm(word)).toBe(stem)
  })
})

test('framing words of a question do not count against the passage that answers it', () => {
  const index = new PassageIndex()
  index.add([{ id: 'hours-0', documentId: 'hours', title: 'Hours', text: 'We open at 7 am and close at 6 pm every day. Sourdough is baked fresh each morning.' }])
  for (const q of ['What time do you open?', 'How long are you open?']) {
    const [best] = index.search(q, 1)
    expect({ q, found: best.similarity >= FOUND_SIMILARITY }).toEqual({ q, found: true })
  }
})
