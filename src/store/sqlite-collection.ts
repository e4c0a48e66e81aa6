/**
 * One collection of the SQLite store: a table `(id TEXT PRIMARY KEY, doc TEXT NOT NULL)` with the
 * document as JSON, plus a key column for each field its indexes use (key-columns.ts). Each method
 * is one statement; writes go through the store's group commit (group-commit.ts) and resolve once
 * it has committed. In exclusive mode `get` answers from the store's document cache when it holds
 * the document (doc-cache.ts), which every write below keeps true.
 */
import { type Database, SQLiteError, type Statement } from 'bun:sqlite'
import type { CachedDocs, DocCache } from './doc-cache'
import { asJsonValue, removePath, setPath } from './doc-edit'
import type { GroupCommit } from './group-commit'
import { ensureTable, type KeyPath, type KeyValue, keyPathsOf, keyValues, splitPaths, uniqueIndexOf } from './key-columns'
import { assertLimit, assertName, assertPath, compareKeys, definedEntries } from './paths'
import { type Collection, type CollectionSpec, type Doc, type DocView, DuplicateKeyError, type Filter, type FindOptions, type Group, type GroupOptions, type PageAfter, type Write } from './port'
import { compileAfter, compileFilter, compileGroupKey, compileSort, type KeyPaths, keyColumn, type Params, pageOrder, sumOf } from './sqlite-filter'

type DocRow = { doc: string }

// Prepared statements kept per collection (see SqliteCollection.query): several times the filter
// shapes one collection's code uses.
const MAX_STATEMENTS = 200

export class SqliteCollection<T extends Doc> implements Collection<T> {
  readonly name: string
  /** One connection, one open batch at a time: a write applies as issued and commits with or before later ones (group-commit.ts). */
  readonly pipelined = true
  private readonly table: string
  private readonly indexPrefix: string
  /** The fields kept in key columns (the indexes' fields), in column order, and as a set for the query compiler. */
  private readonly keyPaths: string[]
  private readonly keySteps: KeyPath[]
  private readonly keys: KeyPaths
  /** Prepared queries by SQL text (see `query`). */
  private readonly statements = new Map<string, Statement<unknown, Params>>()
  /** This collection's documents in the store's document cache, in exclusive mode (doc-cache.ts). */
  private readonly cached: CachedDocs | null
  private readonly stmt: {
    get: Statement<DocRow, [string]>
    /** The key columns of one row, in keyPaths order. */
    keys: Statement<unknown, [string]>
    /** The document, then its key columns. */
    docAndKeys: Statement<unknown, [string]>
    insert: Statement<unknown, Params>
    /** The document only: an update that changed no key leaves the indexes alone. */
    replaceDoc: Statement<unknown, [string, string]>
    delete: Statement<unknown, [string]>
  }

  constructor(
    private readonly db: Database,
    private readonly spec: CollectionSpec,
    private readonly batch: GroupCommit,
    /** The store's document cache, when its connection is the file's only writer (doc-cache.ts). */
    cache: DocCache | null = null,
  ) {
    this.name = assertName('collection', spec.name)
    this.cached = cache?.of(this.name) ?? null
    for (const index of spec.indexes) assertName('index', index.name)
    this.table = `"${this.name}"`
    // SQLite index names are global to the file, so they carry the collection name.
    this.indexPrefix = `${this.name}__`
    this.keyPaths = keyPathsOf(spec)
    this.keySteps = splitPaths(this.keyPaths)
    this.keys = new Set(this.keyPaths)
    ensureTable(db, this.table, this.indexPrefix, spec, this.keyPaths)
    const t = this.table
    const columns = this.keyPaths.map(keyColumn)
    this.stmt = {
      get: db.query(`SELECT doc FROM ${t} WHERE id = ?`),
      keys: db.query(`SELECT ${columns.length ? columns.join(', ') : 'NULL'} FROM ${t} WHERE id = ?`),
      docAndKeys: db.query(`SELECT ${['doc', ...columns].join(', ')} FROM ${t} WHERE id = ?`),
      insert: db.query(`INSERT INTO ${t} (${['id', 'doc', ...columns].join(', ')}) VALUES (${['?', '?', ...columns.map(() => '?')].join(', ')})`),
      replaceDoc: db.query(`UPDATE ${t} SET doc = ? WHERE id = ?`),
      delete: db.query(`DELETE FROM ${t} WHERE id = ?`),
    }
  }

  /** The stored row's key columns (null: no such row). */
  private storedKeys(id: string): KeyValue[] | null {
    const row = this.stmt.keys.values(id)[0] as KeyValue[] | undefined
    // With no key columns the statement selects one NULL: the row is there, with no keys.
    return row ? row.slice(0, this.keyPaths.length) : null
  }

  /**
   * Rewrites a stored row: the document, and only the key columns that changed, so only the indexes
   * on those are touched (setting a column to its old value still rewrote its index entries: the
   * recipients of bench:campaigns, whose status changes, lost 3% of their sends/s that way).
   */
  private rewrite(id: string, json: string, before: KeyValue[], after: KeyValue[]): { changes: number } {
    const changed = this.keyPaths.flatMap((_, i) => (before[i] === after[i] ? [] : [i]))
    if (changed.length === 0) return this.stmt.replaceDoc.run(json, id)
    // One statement per set of changed columns, kept like the queries' (a collection's writes change a few such sets).
    const sql = `UPDATE ${this.table} SET doc = ?, ${changed.map((i) => `${keyColumn(this.keyPaths[i]!)} = ?`).join(', ')} WHERE id = ?`
    return this.query<unknown>(sql).run(json, ...changed.map((i) => after[i]!), id)
  }

  /**
   * The prepared statement for `sql`, kept per collection. bun:sqlite's own cache (`db.query`) holds
   * only the 20 most recent statements, fewer than the queries of one call (bench:calls), so most
   * finds re-prepared their statement: 10–30 µs each. A collection's queries are its code's filter
   * shapes, a few dozen; the bound only stops an unusual caller (long `$in` lists of varying
   * length) from growing the map, by dropping the oldest.
   */
  private query<R>(sql: string): Statement<R, Params> {
    let statement = this.statements.get(sql)
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) {
        const [oldest, dropped] = this.statements.entries().next().value!
        this.statements.delete(oldest)
        dropped.finalize()
      }
      statement = this.db.prepare<unknown, Params>(sql)
      this.statements.set(sql, statement)
    }
    return statement as Statement<R, Params>
  }

  /**
   * Finalizes the statements this collection prepared. The connection closes only once every
   * statement prepared on it is finalized: until then it lives on as a "zombie", keeping its WAL
   * and any transaction it had open, whose write lock the next opener of the file waits on.
   */
  finalize(): void {
    for (const statement of this.statements.values()) statement.finalize()
    this.statements.clear()
  }

  /**
   * Every write to a row drops its cached document first, whether its statement then succeeds or
   * fails (doc-cache.ts); each write path below calls this before its statement.
   */
  private forget(id: string): void {
    this.cached?.delete(id)
  }

  private write<R>(run: () => R): Promise<R> {
    return this.batch.run(() => this.translate(run))
  }

  /** One write of a store commit, applied now (the caller holds the batch's transaction). */
  applyNow(w: Write): Doc | null {
    return this.translate(() => {
      if (w.op === 'insert') {
        this.insertNow(w.doc as T)
        return w.doc
      }
      if (w.op === 'upsert') {
        this.upsertNow(w.doc as T)
        return w.doc
      }
      const entries = definedEntries(w.set)
      checkPaths(entries, w.unset ?? [])
      return this.updateNow(w.id, entries, w.unset ?? [])
    })
  }

  private translate<R>(run: () => R): R {
    try {
      return run()
    } catch (e) {
      if (e instanceof SQLiteError && e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new DuplicateKeyError(this.name, 'id')
      if (e instanceof SQLiteError && e.code === 'SQLITE_CONSTRAINT_UNIQUE') {
        // On key columns SQLite names the columns; on an expression it names the index.
        const index = uniqueIndexOf(e.message, this.table, this.spec) ?? /index '([^']+)'/.exec(e.message)?.[1]
        throw new DuplicateKeyError(this.name, index?.startsWith(this.indexPrefix) ? index.slice(this.indexPrefix.length) : (index ?? e.message))
      }
      throw e
    }
  }

  private docs(sql: string, params: Params): T[] {
    return this.batch.read(() => this.query<DocRow>(sql).all(...params)).map((r) => JSON.parse(r.doc) as T)
  }

  async insert(doc: T): Promise<T> {
    const json = serialize(doc)
    const keys = keyValues(doc, this.keySteps)
    await this.write(() => {
      this.forget(doc.id)
      return this.stmt.insert.run(doc.id, json, ...keys)
    })
    return doc
  }

  private insertNow(doc: T): void {
    this.forget(doc.id)
    this.stmt.insert.run(doc.id, serialize(doc), ...keyValues(doc, this.keySteps))
  }

  async get(id: string): Promise<T | null> {
    const cached = this.cached?.get(id)
    if (cached !== undefined) return JSON.parse(cached) as T
    const row = this.batch.read(() => this.stmt.get.get(id))
    if (!row) return null
    // Not inside someone else's transaction: they may roll it back without the batch knowing.
    if (this.cached && !this.batch.foreign) this.cached.set(id, row.doc)
    return JSON.parse(row.doc) as T
  }

  view<V>(id: string, view: DocView<T, V>): Readonly<V> | null | Promise<Readonly<V> | null> {
    const kept = this.cached?.viewOf(id, view)
    return kept !== undefined ? kept : this.viewRead(id, view)
  }

  private async viewRead<V>(id: string, view: DocView<T, V>): Promise<Readonly<V> | null> {
    const doc = await this.get(id)
    if (doc === null) return null
    // The read just kept the document unless it may not (a caller's transaction, too large, closed).
    return this.cached?.viewOf(id, view) ?? Object.freeze(view(doc))
  }

  async findOne(filter: Filter): Promise<T | null> {
    return (await this.find(filter, { limit: 1 }))[0] ?? null
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const params: Params = []
    const where = compileFilter(filter, params, this.keys)
    // The limit is written into the SQL (a checked integer), not bound: a bound LIMIT cost ~2.5 µs a
    // query here against ~0.2 µs for a literal one (measured on bun:sqlite's SQLite).
    const limit = options.limit === undefined ? '' : ` LIMIT ${assertLimit(options.limit)}`
    return this.docs(`SELECT doc FROM ${this.table} WHERE ${where} ${compileSort(options.sort, this.keys)}${limit}`, params)
  }

  async page(filter: Filter, limit: number, after?: PageAfter | null): Promise<T[]> {
    const { sql, params } = this.pageQuery(filter, limit, after)
    return this.docs(sql, params)
  }

  private pageQuery(filter: Filter, limit: number, after?: PageAfter | null): { sql: string; params: Params } {
    const params: Params = []
    let where = compileFilter(filter, params, this.keys)
    if (after) where += ` AND ${compileAfter(after, params, this.keys)}`
    return { sql: `SELECT doc FROM ${this.table} WHERE ${where} ${pageOrder(this.keys)} LIMIT ${assertLimit(limit)}`, params }
  }

  /** SQLite only: the query plan lines of the page() query (for index tests and diagnosis). */
  explain(filter: Filter, after?: PageAfter | null): string[] {
    const { sql, params } = this.pageQuery(filter, 20, after)
    return this.db
      .query<{ detail: string }, Params>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => r.detail)
  }

  async replace(doc: T): Promise<boolean> {
    const json = serialize(doc)
    const after = keyValues(doc, this.keySteps)
    return (
      (
        await this.write(() => {
          this.forget(doc.id)
          const before = this.storedKeys(doc.id)
          return before ? this.rewrite(doc.id, json, before, after) : { changes: 0 }
        })
      ).changes > 0
    )
  }

  async update(id: string, set: Record<string, unknown>, unset: string[] = []): Promise<T | null> {
    const entries = definedEntries(set)
    checkPaths(entries, unset)
    if (entries.length === 0 && unset.length === 0) return this.get(id)
    return this.write(() => this.updateNow(id, entries, unset))
  }

  /**
   * Read, change and write back in one synchronous step inside the batch's write transaction, so
   * nothing can come between (bun:sqlite is synchronous; the batch holds the write lock). In JS
   * rather than json_set/json_remove: SQLite parsed, edited and re-printed the document for the
   * UPDATE and again for RETURNING: 58 µs against 29–40 µs per update of a call row here, commit included.
   */
  private updateNow(id: string, entries: [string, unknown][], unset: string[]): T | null {
    this.forget(id)
    const row = this.stmt.docAndKeys.values(id)[0] as [string, ...KeyValue[]] | undefined
    if (!row) return null
    const [json, ...before] = row
    const doc = JSON.parse(json) as Record<string, unknown>
    for (const [path, value] of entries) setPath(doc, path, asJsonValue(value))
    for (const path of unset) removePath(doc, path)
    this.rewrite(id, JSON.stringify(doc), before, keyValues(doc, this.keySteps))
    return doc as T
  }

  async upsert(doc: T): Promise<void> {
    const json = serialize(doc)
    const after = keyValues(doc, this.keySteps)
    await this.write(() => this.upsertWith(doc.id, json, after))
  }

  private upsertNow(doc: T): void {
    this.upsertWith(doc.id, serialize(doc), keyValues(doc, this.keySteps))
  }

  /** Read the stored keys first (a primary-key read, ~1 µs): most upserts (an actor's next snapshot) change few keys or none, and an unchanged key costs its index nothing. */
  private upsertWith(id: string, json: string, after: KeyValue[]): void {
    this.forget(id)
    const before = this.storedKeys(id)
    if (before) this.rewrite(id, json, before, after)
    else this.stmt.insert.run(id, json, ...after)
  }

  async delete(id: string): Promise<boolean> {
    return (
      (
        await this.write(() => {
          this.forget(id)
          return this.stmt.delete.run(id)
        })
      ).changes > 0
    )
  }

  async deleteMany(filter: Filter): Promise<number> {
    const params: Params = []
    const where = compileFilter(filter, params, this.keys)
    const sql = `DELETE FROM ${this.table} WHERE ${where}`
    return (
      await this.write(() => {
        // Which rows go is SQLite's to find: every cached document of the collection goes.
        this.cached?.clear()
        return this.query<unknown>(sql).run(...params)
      })
    ).changes
  }

  async count(filter: Filter): Promise<number> {
    const params: Params = []
    const where = compileFilter(filter, params, this.keys)
    return this.batch.read(() => this.query<{ n: number }>(`SELECT count(*) AS n FROM ${this.table} WHERE ${where}`).get(...params))!.n
  }

  async sum(path: string, filter: Filter): Promise<number> {
    const params: Params = []
    const where = compileFilter(filter, params, this.keys)
    const sql = `SELECT ${sumOf(path, this.keys)} AS s FROM ${this.table} WHERE ${where}`
    return this.batch.read(() => this.query<{ s: number }>(sql).get(...params))!.s
  }

  async group(filter: Filter, options: GroupOptions): Promise<Group[]> {
    const sums = options.sum ?? []
    const { key, bool } = compileGroupKey(options.by, this.keys)
    const params: Params = []
    const where = compileFilter(filter, params, this.keys)
    const columns = [`${key} AS k`, `${bool} AS b`, 'count(*) AS n', ...sums.map((p, i) => `${sumOf(p, this.keys)} AS s${i}`)]
    const sql = `SELECT ${columns.join(', ')} FROM ${this.table} WHERE ${where} GROUP BY k, b`
    type Row = { k: string | number | null; b: number; n: number; [sum: string]: string | number | null }
    const groups = this.batch
      .read(() => this.query<Row>(sql).all(...params))
      .map((r) => ({
        key: r.b ? r.k === 1 : r.k,
        count: r.n,
        sums: Object.fromEntries(sums.map((p, i) => [p, r[`s${i}`] as number])),
      }))
    return groups.sort((a, b) => compareKeys(a.key, b.key))
  }
}

function checkPaths(entries: [string, unknown][], unset: string[]): void {
  for (const path of [...entries.map(([p]) => p), ...unset]) {
    if (assertPath(path) === 'id' || path.startsWith('id.')) throw new Error('update cannot change the id')
  }
}

function serialize(doc: Doc): string {
  if (typeof doc?.id !== 'string' || doc.id === '') throw new Error('document needs a non-empty string id')
  return JSON.stringify(doc)
}
