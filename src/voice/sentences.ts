/**
 * Sentence chunking: the model's streamed text in, whole sentences out, so speech starts after the
 * first sentence instead of the whole reply (ClauseChunker starts it after the first clause). A sentence ends at . ! ? (or …) followed by a space;
 * a run-on is cut at a comma or space past MAX_CHARS so a long sentence still starts early.
 * Decimal points and common abbreviations ("Dr.", "e.g.") do not end a sentence.
 */
/** ~10 s of speech at 15 characters a second: longer than that waits too long for its first audio. */
export const MAX_CHARS = 160
/** Shorter "sentences" ("Sure.") join the next one: a TTS request per word sounds choppy. */
export const MIN_CHARS = 12

/** Whether a piece the chunkers made ends a sentence (not a clause, nor a run-on cut at MAX_CHARS). */
export const endsSentence = (piece: string): boolean => /[.!?…]+["')\]]*$/.test(piece.trim())

const ABBREVIATIONS = /\b(?:dr|mr|mrs|ms|st|vs|etc|e\.g|i\.e|no|approx|jr|sr)\.$/i

export class SentenceChunker {
  protected buffer = ''

  /** Text as it streams; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text
    const out: string[] = []
    for (;;) {
      const cut = this.boundary()
      if (cut < 0) break
      const sentence = this.buffer.slice(0, cut).trim()
      this.buffer = this.buffer.slice(cut)
      if (sentence) out.push(sentence)
    }
    return out
  }

  /** The rest, when the text is complete. */
  flush(): string[] {
    const rest = this.buffer.trim()
    this.buffer = ''
    return rest ? [rest] : []
  }

  protected boundary(): number {
    const re = /[.!?…]+["')\]]*\s/g
    for (let m = re.exec(this.buffer); m; m = re.exec(this.buffer)) {
      const end = m.index + m[0].length
      const head = this.buffer.slice(0, m.index + 1)
      if (ABBREVIATIONS.test(head)) continue
      if (/\d\.$/.test(head) && /^\d/.test(this.buffer.slice(end))) continue
      if (head.trim().length < MIN_CHARS) continue
      return end
    }
    if (this.buffer.length > MAX_CHARS) {
      const window = this.buffer.slice(0, MAX_CHARS)
      const comma = window.lastIndexOf(', ')
      if (comma > MIN_CHARS) return comma + 2
      const space = window.lastIndexOf(' ')
      if (space > MIN_CHARS) return space + 1
      return MAX_CHARS
    }
    return -1
  }
}

/**
 * An opening word a speaker pauses after ("Sure, …", "Of course, …"): said alone it sounds as it
 * would in the sentence, so it may go to speech by itself, its audio out while the model writes on.
 */
const OPENER = /^(?:sure|okay|ok|yes|yeah|no|right|well|great|certainly|absolutely|of course|hi|hello|thanks|thank you|alright|all right|got it|perfect)[,;:—–]\s$/i

/**
 * The same, except that the reply's first piece ends at its first clause ("Sure, I can help with
 * that, ", "On Sundays we open at eight; ") once it is MIN_CHARS long, or at an opener ("Sure, "),
 * so the first audio waits for a clause, not a whole sentence; the rest goes by sentences (fewer,
 * longer TTS requests sound smoother).
 */
export class ClauseChunker extends SentenceChunker {
  private first = true

  protected override boundary(): number {
    const sentence = super.boundary()
    if (!this.first) return sentence
    const clause = /[,;:—–]\s/g
    for (let m = clause.exec(this.buffer); m; m = clause.exec(this.buffer)) {
      const end = m.index + m[0].length
      if (sentence >= 0 && sentence <= end) break
      if (this.buffer.slice(0, end).trim().length < MIN_CHARS && !OPENER.test(this.buffer.slice(0, end).trimStart())) continue
      this.first = false
      return end
    }
    if (sentence >= 0) this.first = false
    return sentence
  }
}
