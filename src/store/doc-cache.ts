/**
 * The stored JSON of documents read by id, kept in memory by the SQLite store while its connection
 * is the file's only writer (the exclusive claim, sqlite.ts). A primary-key read outside a
 * transaction cost 5–8 µs here, nearly all of it SQLite opening and closing a WAL read transaction
 * (shared-memory locks); the same read inside one cost 0.6 µs, and a hit here 0.02 µs. A `get` in
 * a turn of its own (an API request) went from 12–17 µs of CPU to 2–2.5 µs, JSON.parse included. On
 * `GET /api/v1/agents/{id}` that read was half of what the service added to a bare server
 * (docs/benchmarks.md, "API hot path").
 *
 * What an entry holds is exactly what `SELECT doc WHERE id = ?` on the store's connection would
 * answer now, uncommitted writes of the open batch included, because:
 * - an entry is set only from such a read, and every write through a collection drops its
 *   document's entry before its statement runs (`deleteMany`, which does not know its ids, drops
 *   the whole collection's);
 * - a batch that rolls back (a failed COMMIT, a statement after which SQLite ended the
 *   transaction) drops every entry, since entries read inside it may hold its writes;
 * - nothing else writes the file: other processes are refused at open, and the checkpointer's
 *   connection copies pages without changing what they say.
 * So a read answered here is the read SQLite would have given. `get`'s callers get their own parse
 * of the text, never a shared object (they change what they read). A view (`viewOf`: a value made
 * from the document alone, such as its public JSON) is kept on the entry and goes with it, so it
 * is as exact as the text; it is shared by every reader, hence frozen and typed read-only.
 */

import type { DocView } from './port'

/**
 * Characters of JSON kept, over all collections: 4 Mi, about 4,000 agents of ~1 KB (the bench's
 * agent is 1.1 KB) or a few hundred call snapshots; bench:endurance asks RSS to stay within 10%
 * (~20 MB) of its first minute, and the cache at its largest is 4–8 MB (one or two bytes a
 * character).
 */
export const DOC_CACHE_CHARS = 4 * 1024 * 1024
/**
 * The share of the budget above which a document is not kept (1/64: 64 Ki characters of 4 Mi): one
 * long transcript would push out dozens of small documents, and its parse costs far more than the read.
 */
const LARGEST_SHARE = 1 / 64
/** What a Map entry costs beyond its text, counted against the budget (an estimate). */
const ENTRY_OVERHEAD = 100

/**
 * One per store: a map per collection, keyed by the id as given (a key built from collection and id
 * cost 0.7–1.6 µs a read here, the concatenated string hashed anew each time, against 0.02 µs).
 * Once the budget is spent, entries not read since they were last passed over go first (a second
 * chance, close to least recently used: moving each hit to the end of its Map, a delete and a set,
 * cost 0.7–1 µs a read): those of the collection taking a new entry, then the others'.
 */
export class DocCache {
  private readonly collections = new Map<string, CachedDocs>()
  /** Characters held over all collections, overhead included. */
  chars = 0
  /** Off once the store closes: nothing is kept, so reads reach the closed connection and fail. */
  enabled = true
  /** The longest document kept, in characters. */
  readonly largest: number

  constructor(readonly budget: number = DOC_CACHE_CHARS) {
    this.largest = budget * LARGEST_SHARE
  }

  /** The documents of one collection (one object per name, kept by the collection). */
  of(collection: string): CachedDocs {
    let docs = this.collections.get(collection)
    if (!docs) {
      docs = new CachedDocs(this)
      this.collections.set(collection, docs)
    }
    return docs
  }

  /** Every entry goes (a batch rolled back); `close` also stops keeping new ones. */
  clear(close = false): void {
    for (const docs of this.collections.values()) docs.clear()
    if (close) this.enabled = false
  }

  /** Back within the budget: the oldest entries of `first`, then of the other collections. */
  trim(first: CachedDocs): void {
    while (this.chars > this.budget && first.evictOldest());
    for (const docs of this.collections.values()) {
      while (this.chars > this.budget && docs.evictOldest());
      if (this.chars <= this.budget) return
    }
  }
}

interface Entry {
  json: string
  /** Read since it was set or last passed over by an eviction. */
  used: boolean
  /** Characters counted against the budget for it and its views. */
  cost: number
  /** What each view made of this version of the document, made on first asking. */
  views?: Map<DocView<never, unknown>, unknown>
}

/** One collection's cached documents, by id. */
export class CachedDocs {
  /** In the order set (a Map iterates in insertion order), but for entries given a second chance. */
  private entries = new Map<string, Entry>()
  private chars = 0

  constructor(private readonly cache: DocCache) {}

  /** The stored JSON of `id`, if kept. */
  get(id: string): string | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.json
  }

  /**
   * What `view` makes of the document kept for `id` (made once per version of the document, then
   * shared, frozen); undefined when `id` is not kept. A view costs the budget as much again as the
   * document's text (an estimate: a view is usually the document, reshaped).
   */
  viewOf<T, V>(id: string, view: DocView<T, V>): Readonly<V> | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    entry.used = true
    if (entry.views === undefined) entry.views = new Map()
    const views = entry.views
    const kept = views.get(view as DocView<never, unknown>)
    if (kept !== undefined || views.has(view as DocView<never, unknown>)) return kept as Readonly<V>
    const made = Object.freeze(view(JSON.parse(entry.json) as T))
    views.set(view as DocView<never, unknown>, made)
    const more = cost(id, entry.json)
    entry.cost += more
    this.count(more)
    this.cache.trim(this)
    return made
  }

  /** Keeps what a read of `id` on the connection just returned. */
  set(id: string, json: string): void {
    if (!this.cache.enabled || json.length > this.cache.largest) return
    this.delete(id)
    const entry = { json, used: false, cost: cost(id, json) }
    this.entries.set(id, entry)
    this.count(entry.cost)
    this.cache.trim(this)
  }

  /** A write to `id` is about to run. */
  delete(id: string): void {
    const entry = this.entries.get(id)
    if (entry === undefined) return
    this.entries.delete(id)
    this.count(-entry.cost)
  }

  /** A write whose documents are not known one by one (`deleteMany`) is about to run; also a rollback. */
  clear(): void {
    this.entries = new Map()
    this.count(-this.chars)
  }

  /** Drops the oldest entry not read since it was last passed over (those read go to the end, unread); false when empty. */
  evictOldest(): boolean {
    for (const [id, entry] of this.entries) {
      this.entries.delete(id)
      if (entry.used) {
        entry.used = false
        this.entries.set(id, entry)
        continue
      }
      this.count(-entry.cost)
      return true
    }
    return false
  }

  private count(chars: number): void {
    this.chars += chars
    this.cache.chars += chars
  }
}

function cost(id: string, json: string): number {
  return id.length + json.length + ENTRY_OVERHEAD
}
