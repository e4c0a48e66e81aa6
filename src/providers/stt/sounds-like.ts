/**
 * Whether a weak engine's words sound like a phrase, read through its own pronouncing dictionary
 * (pocketsphinx's CMU dictionary): a decoder that misses a word mostly returns one a sound away
 * ("Stop." heard as "top", "Wait." as "way", "Hold on." as "how old on"), so the phrase is matched
 * on its sounds, not its spelling. Read once, only the lines asked for.
 */
import { readFileSync } from 'node:fs'

/**
 * How many sounds may differ: one (a sound missed, added or heard as another), for a phrase of
 * three sounds or more; a shorter one ("no": N OW) must match exactly, or every two-sound word
 * one sound away ("go", "so", "oh") would count.
 */
const SOUNDS_APART = 1
const SHORTEST_FUZZY = 3
/** The longest run of the engine's words compared with a phrase (the phrases are one or two words). */
const MAX_WINDOW = 3
/**
 * Runs start at the first word or the second: a stop word opens what a caller says ("Wait, that
 * is not my address"), and the engine may put a word of its own before it. Later words are not
 * read: "for all eight" ("Right.") holds "eight", a sound from "wait".
 */
const FIRST_WORDS = 2

export class PronouncingDictionary {
  private text: string | null = null
  private readonly known = new Map<string, string[] | null>()

  constructor(private readonly path: string) {}

  /** A word's sounds (its first pronunciation), null when the dictionary lacks it. */
  sounds(word: string): string[] | null {
    const w = word.toLowerCase()
    if (this.known.has(w)) return this.known.get(w)!
    this.text ??= readOrNone(this.path)
    const at = !w ? -1 : this.text.startsWith(`${w} `) ? 0 : this.text.indexOf(`\n${w} `)
    const line = at < 0 ? null : this.text.slice(at === 0 ? 0 : at + 1, this.text.indexOf('\n', at + 1))
    const sounds = line ? line.split(/\s+/).slice(1) : null
    this.known.set(w, sounds)
    return sounds
  }

  /** Whether `text`, or a run of up to MAX_WINDOW of its words from its first FIRST_WORDS, sounds like one of `phrases`. */
  soundsLike(text: string, phrases: readonly string[]): boolean {
    const words = text
      .toLowerCase()
      .replace(/[^a-z'\s]/g, ' ')
      .split(/\s+/)
      .filter(Boolean)
    const heard = words.map((w) => this.sounds(w))
    return phrases.some((phrase) => {
      const target = this.phraseSounds(phrase)
      if (!target) return false
      const allowed = target.length >= SHORTEST_FUZZY ? SOUNDS_APART : 0
      for (let i = 0; i < Math.min(words.length, FIRST_WORDS); i++)
        for (let j = i + 1; j <= Math.min(words.length, i + MAX_WINDOW); j++) {
          const run = heard.slice(i, j)
          if (run.some((s) => !s)) break
          if (distance(run.flat() as string[], target) <= allowed) return true
        }
      return false
    })
  }

  private phraseSounds(phrase: string): string[] | null {
    const parts = phrase.split(' ').map((w) => this.sounds(w))
    return parts.some((p) => !p) ? null : (parts.flat() as string[])
  }
}

/** The dictionary's text; '' where it cannot be read (its package not installed): then no word sounds like anything. */
function readOrNone(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/** Edit distance between two sequences of sounds. */
function distance(a: readonly string[], b: readonly string[]): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}
