/**
 * The stored JSON of documents read by id, kept in memory by the SQLite store while its connection
 * is the file's only writer (the exclusive claim, sqlite.ts). A primary-key read outside a
 * transaction cost 5–8 µs here, nearly all of it SQLite opening and closing a WAL read transaction
 * (shared-memory locks); the same read inside one cost 0.6 µs, and a hit here 0.1 µs. On
 * `GET /api/v1/agents/{id}` that read was half of what the service added to a bare server
 * (docs/benchmarks.md, "API hot path").
 *
 * What an entry holds is exactly what `SELECT doc WHERE id = ?` on the store's connection would
 * answer now, uncommitted writes of the open batch included, because:
 * - an entry is set only from such a read, and every write through a collection drops its
 *   document's entry before its statement runs (`deleteMany`, which does not know its ids, moves
 *   the collection's generation, and older entries read as absent);
 * - a batch that rolls back (a failed COMMIT, a statement after which SQLite ended the
 *   transaction) drops every entry, since entries read inside it may hold its writes;
 * - nothing else writes the file: other processes are refused at open, and the checkpointer's
 *   connection copies pages without changing what they say.
 * So a read answered here is the read SQLite would have given. Callers get their own parse of the
 * text, never a shared object.
 */

/**
 * Characters of JSON kept, over all collections: 4 Mi, about 4,000 agents of ~1 KB (the bench's
 * agent is 1.1 KB) or a few hundred call snapshots; bench:endurance asks RSS to stay within 10%
 * (~20 MB) of its first minute, and the cache at its largest is 4–8 MB (one or two bytes a
 * character).
 */
export const DOC_CACHE_CHARS = 4 * 1024 * 1024
/**
 * A document longer than this (64 Ki characters, 1/64 of the budget) is not kept: one long
 * transcript would push out dozens of small documents, and its parse costs far more than the read.
 */
const LARGEST_KEPT = DOC_CACHE_CHARS / 64
/** What a Map entry and its key cost beyond the text, counted against the budget (an estimate). */
const ENTRY_OVERHEAD = 100

interface Entry {
  json: string
  /** The collection's generation when read (see `DocCache.generation`). */
  generation: number
}

/** One per store: least recently used entries go first once the budget is spent. */
export class DocCache {
  private readonly entries = new Map<string, Entry>()
  private chars = 0
  private enabled = true
  /** Per collection: moved by a write whose documents are not known one by one (`deleteMany`). */
  private readonly generations = new Map<string, number>()

  constructor(private readonly budget: number = DOC_CACHE_CHARS) {}

  /** The stored JSON of `collection`/`id`, if kept and current. */
  get(collection: string, id: string): string | undefined {
    const key = keyOf(collection, id)
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    if (entry.generation !== this.generation(collection)) {
      this.chars -= cost(key, entry.json)
      return undefined
    }
    // Re-inserted: a Map iterates in insertion order, so the first entry is the least recently used.
    this.entries.set(key, entry)
    return entry.json
  }

  /** Keeps what a read of `collection`/`id` on the connection just returned. */
  set(collection: string, id: string, json: string): void {
    if (!this.enabled || json.length > LARGEST_KEPT) return
    const key = keyOf(collection, id)
    this.drop(key)
    this.entries.set(key, { json, generation: this.generation(collection) })
    this.chars += cost(key, json)
    for (const [oldest, entry] of this.entries) {
      if (this.chars <= this.budget) break
      this.entries.delete(oldest)
      this.chars -= cost(oldest, entry.json)
    }
  }

  /** A write to `collection`/`id` is about to run. */
  delete(collection: string, id: string): void {
    this.drop(keyOf(collection, id))
  }

  /** A write to `collection` whose documents are not known one by one is about to run. */
  deleteAll(collection: string): void {
    this.generations.set(collection, this.generation(collection) + 1)
  }

  /** Every entry goes (a batch rolled back); `close` also stops keeping new ones. */
  clear(close = false): void {
    this.entries.clear()
    this.chars = 0
    if (close) this.enabled = false
  }

  /** Characters held, overhead included (for tests). */
  get size(): number {
    return this.chars
  }

  private generation(collection: string): number {
    return this.generations.get(collection) ?? 0
  }

  private drop(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.chars -= cost(key, entry.json)
  }
}

/** Collection names are identifiers (paths.ts assertName), so the first NUL ends the name. */
function keyOf(collection: string, id: string): string {
  return `${collection}\u0000${id}`
}

function cost(key: string, json: string): number {
  return key.length + json.length + ENTRY_OVERHEAD
}
