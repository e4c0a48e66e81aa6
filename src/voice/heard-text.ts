/**
 * What the caller heard of an agent's turn, as text: the sentences whose audio played whole, then
 * the part of the one playing up to the last echoed mark, cut at a word (playout.ts): the last word
 * whose audio played whole where the engine reported word timings, else as far into the text as
 * into its audio.
 */

export interface Sentence {
  text: string
  samples: number
  complete: boolean
  /** Where each word's audio ends (samples from the sentence's start), when the engine reported it. */
  words?: { end: number }[]
}

/** A turn's sentences and how far the line has played them. */
export interface HeardTurn {
  sentences: Sentence[]
  /** Last echoed mark: sentence index and samples of it played. */
  heard: { sentence: number; samples: number } | null
}

/** The text of a sentence up to `samples` of its audio, to the last whole word. */
export function cutAt(s: Sentence, samples: number): string {
  if (s.samples === 0) return ''
  const ratio = samples / s.samples
  if (s.complete && ratio >= 0.98) return s.text
  // The engine's word timings: the words whose audio played whole, as the text writes them.
  if (s.words?.length) {
    const played = s.words.filter((w) => w.end <= samples).length
    const word = [...s.text.matchAll(/\S+/g)][played - 1]
    return word ? s.text.slice(0, word.index + word[0].length) : ''
  }
  const chars = Math.floor(s.text.length * Math.min(1, ratio))
  if (chars >= s.text.length) return s.text
  const head = s.text.slice(0, chars + 1)
  const space = head.lastIndexOf(' ')
  return space > 0 ? s.text.slice(0, space).trim() : ''
}

/** The text of the turn's first `count` sentences. */
export function wholeText(turn: HeardTurn, count: number): string {
  return turn.sentences
    .slice(0, count)
    .map((s) => s.text)
    .filter(Boolean)
    .join(' ')
}

/** The sentences heard whole, then the heard part of the one playing (cut at a word). */
export function heardText(turn: HeardTurn): string {
  if (!turn.heard) return ''
  const part = cutAt(turn.sentences[turn.heard.sentence]!, turn.heard.samples)
  return [wholeText(turn, turn.heard.sentence), part].filter(Boolean).join(' ')
}

/** The rest of the sentence playing that the caller did not hear ('' when none). */
export function unheardOfSentence(turn: HeardTurn): string {
  const current = turn.sentences[turn.heard?.sentence ?? 0]
  if (!current) return ''
  const said = turn.heard ? cutAt(current, turn.heard.samples) : ''
  return current.text.slice(said.length).trim()
}
