/**
 * The document-store port. Every repository talks to a `Collection`; the SQLite adapter
 * (embedded default) and the MongoDB adapter (production) implement it with the same meaning,
 * checked by one contract suite (test/store/contract.ts).
 *
 * Conventions every adapter and caller keeps:
 * - documents are plain JSON objects with a string `id`;
 * - timestamps are ISO 8601 UTC strings with milliseconds (`2026-11-21T10:00:00.000Z`), so their
 *   lexical order is their time order and adapters compare them as strings;
 * - field paths may be dotted (`voice.answersCalls`);
 * - `null` in a filter matches a field that is null or missing (MongoDB's meaning);
 * - filters compare scalar fields: matching an element inside an array field is not part of the port.
 */

export type Scalar = string | number | boolean | null

export type Doc = { id: string; [field: string]: unknown }

export interface Condition {
  $eq?: Scalar
  $ne?: Scalar
  $in?: Scalar[]
  $nin?: Scalar[]
  $gt?: string | number
  $gte?: string | number
  $lt?: string | number
  $lte?: string | number
  /** true: present and not null; false: missing or null */
  $exists?: boolean
}

/** Field path → value (equality) or condition. All entries must hold (AND). */
export type Filter = Record<string, Scalar | Condition>

export type Direction = 1 | -1

export interface IndexSpec {
  /** Stable name; adapters create the index once under this name. */
  name: string
  fields: [path: string, direction: Direction][]
  /**
   * Give every document the fields of a non-sparse unique index: documents where they are null or
   * missing clash on MongoDB but not on SQLite. Use `sparse` for optional fields.
   */
  unique?: boolean
  /**
   * Unique indexes only consider documents where every field listed here is present and not null
   * (e.g. `externalId` unique per workspace only when set).
   */
  sparse?: boolean
}

export interface CollectionSpec {
  name: string
  indexes: IndexSpec[]
}

/** Keyset position for newest-first listing: documents strictly older than this one. */
export interface PageAfter {
  createdAt: string
  id: string
}

export interface FindOptions {
  sort?: [path: string, direction: Direction][]
  limit?: number
}

export interface GroupOptions {
  /** Group key: a field path, or an ISO timestamp field truncated to its UTC day or hour. */
  by: string | { path: string; unit: 'day' | 'hour' }
  /** Numeric fields to sum per group (missing counts as 0). */
  sum?: string[]
}

export interface Group {
  /** The field value, `YYYY-MM-DD` for a day, or `0`–`23` (number) for an hour of the day. */
  key: Scalar
  count: number
  sums: Record<string, number>
}

export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} (${index})`)
    this.name = 'DuplicateKeyError'
  }
}

/**
 * A value made from one document alone (its public JSON, say). The function is the view's identity:
 * declare it once at module level, never as a closure per call.
 */
export type DocView<T, V> = (doc: T) => V

export interface Collection<T extends Doc> {
  readonly name: string
  /** Inserts a new document. Throws DuplicateKeyError on a unique index or id clash. */
  insert(doc: T): Promise<T>
  get(id: string): Promise<T | null>
  /**
   * What `view` makes of document `id`, or null when there is none. An adapter may keep the value
   * until the document next changes and hand that one frozen value to every reader (the embedded
   * store does, doc-cache.ts): it is read-only, and `view` must read nothing but the document.
   * A value kept so is answered as it is, not in a promise (no turn of the event loop for it).
   */
  view<V>(id: string, view: DocView<T, V>): Readonly<V> | null | Promise<Readonly<V> | null>
  findOne(filter: Filter): Promise<T | null>
  find(filter: Filter, options?: FindOptions): Promise<T[]>
  /** Newest first by (createdAt desc, id desc); `after` continues below a previous page's last item. */
  page(filter: Filter, limit: number, after?: PageAfter | null): Promise<T[]>
  /** Replaces the whole document with the same id; false when it does not exist. */
  replace(doc: T): Promise<boolean>
  /**
   * Sets top-level or dotted fields and removes `unset` paths; returns the new document or null
   * when there is no document with that id. Throws DuplicateKeyError.
   */
  update(id: string, set: Record<string, unknown>, unset?: string[]): Promise<T | null>
  /** Inserts or replaces by id. */
  upsert(doc: T): Promise<void>
  delete(id: string): Promise<boolean>
  deleteMany(filter: Filter): Promise<number>
  count(filter: Filter): Promise<number>
  /** Sum of a numeric field over matching documents (0 when none). */
  sum(path: string, filter: Filter): Promise<number>
  /** Counts (and sums) per group, computed by the store, not by loading documents. */
  group(filter: Filter, options: GroupOptions): Promise<Group[]>
  /**
   * True where every write of the store (this collection and the others) applies as it is issued —
   * a read that follows sees it before its promise settles — and writes commit in the order they
   * were issued, so a crash never keeps a later write and loses an earlier one: a caller may issue a
   * write and go on to the next without waiting for the first to commit (the embedded store's group
   * commit). A write refused on its own (a duplicate key) does not stop the later ones. False for
   * MongoDB, where writes in flight together may land in any order.
   */
  readonly pipelined: boolean
}

/**
 * One write of an atomic commit (DocumentStore.commit), on a collection of that store named by its
 * spec's name. The same meaning as the collection method of that name.
 */
export type Write =
  | { collection: string; op: 'insert'; doc: Doc }
  | { collection: string; op: 'update'; id: string; set: Record<string, unknown>; unset?: string[] }
  | { collection: string; op: 'upsert'; doc: Doc }

/** Hears how long each commit took, in seconds (a batch's COMMIT on SQLite, one write on MongoDB): /metrics. */
export type CommitObserver = (seconds: number) => void

/**
 * Whether the store takes writes now (readiness): `disk_full` when writes fail for want of space
 * (out-of-space.ts), `unavailable` when the store cannot be reached; the message says what was seen.
 */
export type StoreHealth = { ok: true } | { ok: false; cause: 'disk_full' | 'unavailable'; message: string }

export interface DocumentStore {
  readonly kind: 'sqlite' | 'mongodb'
  /** Opens (and on first use creates with its indexes) a collection. */
  collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>>
  /**
   * Applies the writes in order as one transaction: all of them or, when one fails (a duplicate
   * key), none; a crash keeps all or none. For a document and the event that reports it
   * (EventBus.publishWith). Each collection must have been opened on this store. Resolves to what
   * each write's collection method would: the inserted or upserted document, the updated one (null
   * when there was none).
   */
  commit(writes: Write[]): Promise<(Doc | null)[]>
  /**
   * True where `commit` is all or none. False only on a MongoDB server that is not a replica set
   * (transactions need one): the writes then apply one after another, and a crash between two
   * keeps the first.
   */
  readonly atomic: boolean
  /** Whether writes go through now; cheap enough for a load balancer's readiness checks. */
  health(): Promise<StoreHealth>
  /** Releases the connection or file; the data stays (reopening sees it). */
  close(): Promise<void>
}
