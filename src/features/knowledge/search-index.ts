/**
 * One agent's passages, searchable in memory. Ranking is MiniSearch's BM25+ over `title` and
 * `text`; this file only chooses how words are normalised and how forgiving matching is, and
 * defines `similarity`, the 0–1 figure analytics reports as best_similarity.
 *
 * similarity = share of the question's informative weight that the passage contains:
 *
 *     Σ credit(q) · idf(q)  /  Σ idf(q)     over the distinct query terms q (stop words removed)
 *
 * credit is 1 for an exact term match, PARTIAL_CREDIT when q only matched by prefix or typo
 * tolerance, 0 when absent; idf is BM25's ln(1 + (N − df + 0.5)/(df + 0.5)) over this agent's
 * passages. Unlike the raw BM25 score (unbounded, grows with query length and corpus size), it
 * means the same thing for every question: 1 = every meaningful word of the question is in the
 * passage; 0.3 = only the commonest of them. A term the knowledge never mentions has the
 * highest idf, so a question about something absent scores low even if filler words match.
 */
import MiniSearch, { type SearchResult } from 'minisearch'

/**
 * A search "found" an answer when the best passage carries at least this similarity. On the
 * bench corpus (bench/knowledge.ts), nine in ten in-scope questions, typos and clipped
 * phrasings included, score 0.43 or more and half score 1.0; what the rest lack are framing
 * words ("long" in "how long do refunds take"). Questions the knowledge does not cover score
 * at most ~0.3 there and in the tests (a shared everyday word like "store"). 0.4 sits in that
 * gap, leaning low so that answered questions which drop a framing word still count as found:
 * a gap list padded with questions the knowledge does answer teaches people to ignore it.
 */
export const FOUND_SIMILARITY = 0.4
/** Credit for a query term matched only by prefix/fuzzy ("refund" → "refunded", "recieve"). */
const PARTIAL_CREDIT = 0.5
/** The document title is shared by all its passages; a match there is good evidence of topic. */
const TITLE_BOOST = 1.5

export interface IndexedPassage {
  id: string
  documentId: string
  title: string
  text: string
}

export interface SearchHit {
  passageId: string
  documentId: string
  title: string
  text: string
  /** MiniSearch's BM25+ score: orders hits within one search, not comparable across searches. */
  score: number
  /** 0–1, see the top of this file. */
  similarity: number
}

// English stop words: function words, the question scaffolding people type around the real
// subject ("how do I", "can you tell me", "what time", "how long", "how often"), and the
// fragments the tokenizer leaves of contractions ("doesn't" → "doesn", "t"). Dropping them keeps
// BM25 and similarity on content: "what time do you open" is about opening, and a page that says
// "we open at 7 am" answers it.
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being
  below between both but by can could did do does doing down during each few for from further had
  has have having he her here hers herself him himself his how i if in into is it its itself just
  me more most my myself no nor not of off on once only or other our ours ourselves out over own
  same she should so some such than that the their theirs them themselves then there these they
  this those through to too under until up very was we were what when where which while who whom
  why will with would you your yours yourself yourselves tell please know want need get got also
  let may might must shall us hi hello thanks thank ok okay much many time times long often soon
  don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn cant ll re ve`.split(/\s+/),
)

/**
 * Lower-cases, drops stop words and one-letter fragments ("don't" → "don", "t"), and strips
 * common English inflections so "refunds", "refunded" and "refunding" meet "refund". A light
 * suffix stripper in the spirit of Harman's S-stemmer (no stemming library is installed);
 * prefix and typo matching cover what it misses.
 */
export function normaliseTerm(term: string): string | null {
  const t = term.toLowerCase().replace(/['’]/g, '')
  if (t.length < 2 || STOP_WORDS.has(t)) return null
  return stem(t)
}

function stem(t: string): string {
  if (/^\d/.test(t)) return t
  if (t.length > 4 && t.endsWith('ies') && !/[ae]ies$/.test(t)) return `${t.slice(0, -3)}y`
  if (t.length > 3 && t.endsWith('es') && !/[aeo]es$/.test(t)) return t.slice(0, -1)
  if (t.length > 3 && t.endsWith('s') && !/(us|ss|is)$/.test(t)) return t.slice(0, -1)
  for (const suffix of ['ing', 'ed']) {
    const base = t.slice(0, -suffix.length)
    if (t.endsWith(suffix) && base.length >= 4) {
      // "shipping" → "shipp" → "ship"; "calling" keeps "call" (ll, ss, zz are real endings).
      return /([^aeioulsz])\1$/.test(base) ? base.slice(0, -1) : base
    }
  }
  return t
}

const tokenize: (text: string) => string[] = MiniSearch.getDefault('tokenize')

export const SEARCH_OPTIONS = {
  // OR: a natural question always carries words the answer does not; BM25 ranks passages that
  // match more (and rarer) terms first.
  combineWith: 'OR' as const,
  boost: { title: TITLE_BOOST },
  // Prefix from 4 letters: bridges inflections the stemmer misses ("pric" → "price") without
  // letting "pr" match half the vocabulary.
  prefix: (term: string) => term.length >= 4,
  // Typos: one edit from 5 letters, two from 10 (short words have too many neighbours).
  fuzzy: (term: string) => (term.length >= 10 ? 2 : term.length >= 5 ? 1 : false),
  maxFuzzy: 2,
}

export class PassageIndex {
  private readonly mini = new MiniSearch<IndexedPassage>({
    fields: ['title', 'text'],
    storeFields: ['documentId', 'title', 'text'],
    processTerm: (term) => normaliseTerm(term),
    searchOptions: SEARCH_OPTIONS,
  })
  /** Passages per term, for idf; kept in step with the index on every add and remove. */
  private readonly df = new Map<string, number>()
  private readonly byDocument = new Map<string, string[]>()
  private charCount = 0

  /** Passages indexed. */
  get size(): number {
    return this.mini.documentCount
  }

  /** Characters of passage text held: the LRU's measure of this index's memory. */
  get chars(): number {
    return this.charCount
  }

  has(passageId: string): boolean {
    return this.mini.has(passageId)
  }

  /** Adds passages; ones already present are skipped, so replaying an add is harmless. */
  add(passages: IndexedPassage[]): void {
    for (const p of passages) {
      if (this.mini.has(p.id)) continue
      this.mini.add(p)
      this.countTerms(p, 1)
      const ids = this.byDocument.get(p.documentId) ?? []
      ids.push(p.id)
      this.byDocument.set(p.documentId, ids)
      this.charCount += p.text.length
    }
  }

  removeDocument(documentId: string): void {
    for (const id of this.byDocument.get(documentId) ?? []) {
      const stored = this.mini.getStoredFields(id) as Omit<IndexedPassage, 'id'> | undefined
      if (!stored) continue
      this.countTerms({ id, ...stored }, -1)
      this.charCount -= stored.text.length
      this.mini.discard(id)
    }
    this.byDocument.delete(documentId)
  }

  search(query: string, k: number): SearchHit[] {
    const terms = queryTerms(query)
    if (terms.length === 0) return []
    const results = this.mini.search(query).slice(0, k)
    return results.map((r) => ({
      passageId: String(r.id),
      documentId: r.documentId as string,
      title: r.title as string,
      text: r.text as string,
      score: r.score,
      similarity: this.similarity(terms, r),
    }))
  }

  private similarity(terms: string[], result: SearchResult): number {
    const matched = new Set(result.queryTerms)
    const exact = new Set(result.terms)
    let total = 0
    let got = 0
    for (const q of terms) {
      const idf = this.idf(q)
      total += idf
      if (exact.has(q)) got += idf
      else if (matched.has(q)) got += PARTIAL_CREDIT * idf
    }
    return total > 0 ? Math.round((got / total) * 1000) / 1000 : 0
  }

  private idf(term: string): number {
    const n = this.mini.documentCount
    const df = this.df.get(term) ?? 0
    return Math.log(1 + (n - df + 0.5) / (df + 0.5))
  }

  private countTerms(p: IndexedPassage, delta: 1 | -1): void {
    for (const term of new Set(queryTerms(`${p.title} ${p.text}`))) {
      const next = (this.df.get(term) ?? 0) + delta
      if (next > 0) this.df.set(term, next)
      else this.df.delete(term)
    }
  }
}

/** The distinct normalised terms of a text, as the index sees them. */
export function queryTerms(text: string): string[] {
  const out = new Set<string>()
  for (const token of tokenize(text)) {
    const term = normaliseTerm(token)
    if (term) out.add(term)
  }
  return [...out]
}

type CacheEntry = { promise: Promise<PassageIndex>; index: PassageIndex | null }

/**
 * Least-recently-used indexes, bounded by the text they hold and by count (service.ts says
 * why the numbers). Builds are shared: concurrent first searches for one key wait on the same
 * load. Map iteration order is insertion order, so re-inserting on use moves a key to the back.
 */
export class IndexCache {
  private readonly entries = new Map<string, CacheEntry>()

  constructor(
    private readonly maxChars: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size
  }

  /** The cached index for `key`, or the one `build` makes (a failed build is not kept). */
  async get(key: string, build: () => Promise<PassageIndex>): Promise<PassageIndex> {
    let entry = this.entries.get(key)
    if (entry) {
      this.entries.delete(key)
      this.entries.set(key, entry)
    } else {
      const created: CacheEntry = { promise: build(), index: null }
      entry = created
      this.entries.set(key, created)
      created.promise.then(
        (index) => {
          created.index = index
        },
        () => {
          if (this.entries.get(key) === created) this.entries.delete(key)
        },
      )
    }
    const index = await entry.promise
    this.evict(key)
    return index
  }

  /** The index for `key` if cached or being built (not a use: order is unchanged). */
  async peek(key: string): Promise<PassageIndex | null> {
    const entry = this.entries.get(key)
    return entry ? entry.promise.catch(() => null) : null
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  /** Drops least-recently-used indexes until both bounds hold; never the one just used. */
  private evict(keep: string): void {
    let chars = 0
    for (const entry of this.entries.values()) chars += entry.index?.chars ?? 0
    for (const [key, entry] of this.entries) {
      if (chars <= this.maxChars && this.entries.size <= this.maxEntries) break
      if (key === keep || !entry.index) continue // in-flight builds are left to finish
      this.entries.delete(key)
      chars -= entry.index.chars
    }
  }
}
