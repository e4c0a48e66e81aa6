/**
 * Splits a document's text into passages: the unit we index, rank and hand to the model.
 *
 * Sizes (characters):
 * - TARGET 800 / MAX 1,000: about 130–170 English words, one focused answer (an FAQ entry, a
 *   policy paragraph). Shorter passages rank more precisely with BM25 (length normalisation
 *   favours focused text) but lose the context that makes an answer usable; longer ones dilute
 *   term weight. At ~200–250 tokens each, the top 3–5 fit a prompt beside the instructions and the
 *   conversation without crowding them.
 * - MIN 600: we do not cut a passage before it has this much text unless a new section starts,
 *   so passages do not shrink to a single sentence when paragraphs are short.
 * - OVERLAP 150: roughly one sentence carried into the next passage when a cut falls inside a
 *   section, so a fact stated across the boundary is whole in at least one passage.
 *
 * Section headings are kept: a passage that continues a section starts with its heading line,
 * so "Refunds" still matches (and the model still knows the topic) three passages later.
 */

export const PASSAGE_TARGET_CHARS = 800
export const PASSAGE_MAX_CHARS = 1000
export const PASSAGE_MIN_CHARS = 600
export const PASSAGE_OVERLAP_CHARS = 150
/** A heading is a short line: longer single lines are paragraphs without punctuation. */
const HEADING_MAX_CHARS = 100

interface Unit {
  text: string
  /** The unit starts a new section (a heading). */
  heading: boolean
  /** A markdown `#` heading, as opposed to a short line that looks like one. */
  explicit?: boolean
}

interface Part {
  text: string
  /** How it joins the part before it: a sentence continues its paragraph, a paragraph breaks. */
  sep: ' ' | '\n\n'
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' })

/**
 * Splits `text` into passages of at most PASSAGE_MAX_CHARS. Each passage is its section heading
 * (when there is one) followed by whole paragraphs, or whole sentences of a paragraph too big
 * to fit.
 */
export function chunkText(text: string): string[] {
  const passages: string[] = []
  let heading: string | null = null
  let parts: Part[] = []
  let size = 0
  const room = () => PASSAGE_MAX_CHARS - (heading ? heading.length + 1 : 0)

  const emit = (carry: boolean) => {
    if (parts.length === 0) return
    const body = parts.map((p, i) => (i === 0 ? p.text : p.sep + p.text)).join('')
    passages.push(heading ? `${heading}\n${body}` : body)
    const tail = carry ? overlapTail(parts[parts.length - 1].text) : null
    parts = tail ? [{ text: tail, sep: '\n\n' }] : []
    size = tail ? tail.length : 0
  }
  const add = (part: Part) => {
    if (size > 0 && (size + part.sep.length + part.text.length > room() || size >= PASSAGE_TARGET_CHARS)) {
      emit(true)
      // The carried overlap must not push the new passage past the maximum.
      if (size + part.sep.length + part.text.length > room()) {
        parts = []
        size = 0
      }
    }
    parts.push(part)
    size += (parts.length > 1 ? part.sep.length : 0) + part.text.length
  }

  // A heading line waits here until content follows it. A second heading-like line arriving
  // first shows the earlier one was a short line of content (a price list: "Bread 3 dollars"),
  // unless it was a markdown heading, which is a container whose title adds nothing.
  let pending: Unit | null = null
  const flushPending = () => {
    if (pending && !pending.explicit) add({ text: pending.text, sep: '\n\n' })
    pending = null
  }

  for (const unit of toUnits(normalise(text))) {
    if (unit.heading) {
      flushPending()
      pending = unit
      continue
    }
    if (pending) {
      // A new section always starts a new passage, however short the last one is.
      emit(false)
      heading = pending.text
      pending = null
    }
    const fits = size + 2 + unit.text.length <= room()
    if (fits || size >= PASSAGE_MIN_CHARS) {
      if (unit.text.length <= room()) {
        add({ text: unit.text, sep: '\n\n' })
        continue
      }
    }
    // The paragraph does not fit and the passage is still short: fill it sentence by sentence.
    splitSentences(unit.text, room()).forEach((s, i) => {
      add({ text: s, sep: i === 0 ? '\n\n' : ' ' })
    })
  }
  flushPending()
  emit(false)
  return passages
}

function normalise(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      .replace(/[\t\f\v\u00a0]+/g, ' ')
      // Trailing spaces per line with trimEnd, not /[ ]+\n/: that regex retries a long run of
      // spaces from every position when no newline follows (200,000 spaces took 7 s).
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  )
}

/** Paragraphs, with headings marked. */
function toUnits(text: string): Unit[] {
  const units: Unit[] = []
  const blocks = text.split(/\n\s*\n/)
  blocks.forEach((raw, i) => {
    // Indentation carries no meaning in a passage (html-to-text indents list items).
    const lines = raw
      .trim()
      .split('\n')
      .map((l) => l.trim())
    // A heading may be its own block, or the first line of a block (as html-to-text writes a
    // list under a heading); markdown `#` lines always are.
    if (isHeading(lines[0], lines.length > 1 || i < blocks.length - 1)) {
      const explicit = /^#{1,6}\s/.test(lines[0])
      units.push({ text: lines[0].replace(/^#{1,6}\s+/, '').trim(), heading: true, explicit })
      lines.shift()
    }
    const rest = lines.join('\n').trim()
    if (rest) units.push({ text: rest, heading: false })
  })
  return units
}

function isHeading(line: string, followed: boolean): boolean {
  const l = line.trim()
  if (l.length === 0 || l.length > HEADING_MAX_CHARS) return false
  if (/^#{1,6}\s+\S/.test(l)) return true
  if (!followed) return false
  // List items and sentences are not headings; a question line ("How do refunds work?") is,
  // because FAQ pages title each answer with its question.
  if (/^([-*•]|\d+[.)])\s/.test(l)) return false
  return !/[.!,;:]$/.test(l) && l.split(/\s+/).length <= 14
}

/** Sentences of a paragraph; a "sentence" longer than `budget` is cut at a space. */
function splitSentences(text: string, budget: number): string[] {
  const out: string[] = []
  for (const { segment } of sentenceSegmenter.segment(text)) {
    let s = segment.trim()
    while (s.length > budget) {
      const cut = s.lastIndexOf(' ', budget)
      const at = cut > budget / 2 ? cut : budget
      out.push(s.slice(0, at).trim())
      s = s.slice(at).trim()
    }
    if (s) out.push(s)
  }
  return out
}

/** The last sentence(s) of a passage, up to PASSAGE_OVERLAP_CHARS, to start the next one. */
function overlapTail(last: string): string | null {
  const sentences = [...sentenceSegmenter.segment(last)].map((s) => s.segment.trim()).filter(Boolean)
  const tail: string[] = []
  let size = 0
  for (let i = sentences.length - 1; i >= 0; i--) {
    if (size + sentences[i].length > PASSAGE_OVERLAP_CHARS) break
    tail.unshift(sentences[i])
    size += sentences[i].length + 1
  }
  return tail.length > 0 ? tail.join(' ') : null
}
