/**
 * MongoDB adapter of the document-store port (production). Documents keep their string `id` as
 * `_id` (the primary index for free) and get it back as `id` on every read.
 */
import {
  type ClientSession,
  type Db,
  type Document,
  type IndexDescription,
  MongoClient,
  type Collection as MongoCollection,
  type Filter as MongoFilter,
  MongoServerError,
  type UpdateFilter,
} from 'mongodb'
import { afterClauses, groupKey, mongoPath, PAGE_SORT, toIndexDescription, toMongoFilter, toMongoSort } from './mongo-filter'
import { isOutOfSpace } from './out-of-space'
import { assertLimit, assertName, assertPath, compareKeys, definedEntries } from './paths'
import {
  type Collection,
  type CollectionSpec,
  type CommitObserver,
  type Doc,
  type DocumentStore,
  type DocView,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  type Group,
  type GroupOptions,
  type PageAfter,
  type Scalar,
  type StoreHealth,
  type Write,
} from './port'

interface Stored {
  _id: string
  [field: string]: unknown
}

export async function openMongoStore(url: string, dbName?: string, onCommit?: CommitObserver): Promise<MongoStore> {
  // ignoreUndefined: an undefined field is left out, as JSON.stringify does in the SQLite adapter.
  const client = new MongoClient(url, { ignoreUndefined: true })
  await client.connect()
  return new MongoStore(client, client.db(dbName), onCommit, await supportsTransactions(client))
}

/** Transactions need a replica set member or a mongos; a standalone server answers `hello` with neither. */
async function supportsTransactions(client: MongoClient): Promise<boolean> {
  const hello = await client.db('admin').command({ hello: 1 })
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid'
}

export class MongoStore implements DocumentStore {
  readonly kind = 'mongodb' as const
  private readonly collections = new Map<string, Promise<MongoDocCollection<Doc>>>()

  constructor(
    readonly client: MongoClient,
    readonly db: Db,
    private readonly onCommit?: CommitObserver,
    /** The server takes transactions (a replica set or a sharded cluster): `commit` is all or none. */
    readonly atomic = true,
  ) {}

  /**
   * One multi-document transaction (withTransaction retries it whole on a transient error, so the
   * results are gathered afresh on each run). Without transactions, one write after another.
   */
  async commit(writes: Write[]): Promise<(Doc | null)[]> {
    const targets = await Promise.all(
      writes.map((w) => {
        const c = this.collections.get(w.collection)
        if (!c) throw new Error(`commit: collection ${w.collection} is not open on this store`)
        return c
      }),
    )
    const run = async (session?: ClientSession) => {
      const results: (Doc | null)[] = []
      // One at a time: operations of a transaction must not run in parallel.
      for (const [i, w] of writes.entries()) results.push(await targets[i]!.apply(w, session))
      return results
    }
    const start = performance.now()
    const results = this.atomic ? await this.client.withSession((session) => session.withTransaction(() => run(session))) : await run()
    this.onCommit?.((performance.now() - start) / 1000)
    return results
  }

  async collection<T extends Doc>(spec: CollectionSpec): Promise<MongoDocCollection<T>> {
    let c = this.collections.get(spec.name)
    if (!c) {
      c = MongoDocCollection.open<Doc>(this.db, spec, this.onCommit)
      this.collections.set(spec.name, c)
      c.catch(() => this.collections.delete(spec.name)) // a failed open is retried next time
    }
    // The cache holds one instance per name whatever T a caller names; the store does not check documents' shape.
    return (await c) as MongoDocCollection<T>
  }

  /** A `ping` round trip (readiness bounds how long it may take). */
  async health(): Promise<StoreHealth> {
    try {
      await this.db.command({ ping: 1 })
      return { ok: true }
    } catch (error) {
      return { ok: false, cause: isOutOfSpace(error) ? 'disk_full' : 'unavailable', message: `MongoDB: ${error instanceof Error ? error.message : String(error)}` }
    }
  }

  async close(): Promise<void> {
    await this.client.close()
  }
}

// createIndexes refuses an index whose name or key pattern exists with another definition.
const INDEX_OPTIONS_CONFLICT = 85
const INDEX_KEY_SPECS_CONFLICT = 86
const INDEX_NOT_FOUND = 27
const conflicts = (e: unknown) => e instanceof MongoServerError && (e.code === INDEX_OPTIONS_CONFLICT || e.code === INDEX_KEY_SPECS_CONFLICT)

/**
 * Creates the spec's indexes (idempotent for identical ones). One whose definition changed since an
 * earlier version (other fields, unique, renamed) is refused by the server: the one it clashes with
 * (same name, or same key pattern under another name) is dropped and the index built again, as the
 * SQLite adapter does. Only a refusal leads to a drop, so an unchanged index is never rebuilt.
 */
async function ensureIndexes(coll: MongoCollection<Stored>, wanted: IndexDescription[]): Promise<void> {
  try {
    await coll.createIndexes(wanted)
    return
  } catch (e) {
    if (!conflicts(e)) throw e
  }
  for (const index of wanted) {
    try {
      await coll.createIndexes([index])
      continue
    } catch (e) {
      if (!conflicts(e)) throw e
    }
    const key = JSON.stringify(Object.entries(index.key))
    for (const old of await coll.listIndexes().toArray()) {
      if (old.name === '_id_' || (old.name !== index.name && JSON.stringify(Object.entries(old.key)) !== key)) continue
      // Another instance starting at the same moment may have dropped it first.
      await coll.dropIndex(old.name).catch((e: unknown) => {
        if (!(e instanceof MongoServerError && e.code === INDEX_NOT_FOUND)) throw e
      })
    }
    await coll.createIndexes([index])
  }
}

/** The `$set` / `$unset` of a port update; null when it changes nothing. */
function updateOf(set: Record<string, unknown>, unset: string[]): Document | null {
  const entries = definedEntries(set)
  for (const path of [...entries.map(([p]) => p), ...unset]) {
    if (assertPath(path) === 'id' || path.startsWith('id.')) throw new Error('update cannot change the id')
  }
  if (entries.length === 0 && unset.length === 0) return null
  const update: Document = {}
  if (entries.length) update.$set = Object.fromEntries(entries)
  if (unset.length) update.$unset = Object.fromEntries(unset.map((p) => [p, '']))
  return update
}

const toStored = (doc: Doc): Stored => {
  if (typeof doc?.id !== 'string' || doc.id === '') throw new Error('document needs a non-empty string id')
  const { id, ...rest } = doc
  return { _id: id, ...rest }
}

function fromStored<T>(raw: Document | null): T | null {
  if (!raw) return null
  const { _id, ...rest } = raw
  return { id: _id, ...rest } as T
}

export class MongoDocCollection<T extends Doc> implements Collection<T> {
  /** Writes in flight together may land in any order (port.ts). */
  readonly pipelined = false

  private constructor(
    readonly name: string,
    private readonly coll: MongoCollection<Stored>,
    private readonly onCommit?: CommitObserver,
  ) {}

  static async open<T extends Doc>(db: Db, spec: CollectionSpec, onCommit?: CommitObserver): Promise<MongoDocCollection<T>> {
    const name = assertName('collection', spec.name)
    const coll = db.collection<Stored>(name)
    if (spec.indexes.length) await ensureIndexes(coll, spec.indexes.map(toIndexDescription))
    return new MongoDocCollection<T>(name, coll, onCommit)
  }

  /** Every single-document write: each is its own commit on MongoDB, timed for the commit observer. */
  private async write<R>(run: () => Promise<R>): Promise<R> {
    const start = performance.now()
    const result = await this.translate(run)
    this.onCommit?.((performance.now() - start) / 1000)
    return result
  }

  private async translate<R>(run: () => Promise<R>): Promise<R> {
    try {
      return await run()
    } catch (e) {
      if (e instanceof MongoServerError && e.code === 11000) {
        const index = /index: (\S+) dup key/.exec(e.message)?.[1] ?? Object.keys(e.keyPattern ?? {}).join('_')
        throw new DuplicateKeyError(this.name, index === '_id_' || index === '_id' ? 'id' : index)
      }
      throw e
    }
  }

  /** One write of a store commit, inside its transaction's session (MongoStore.commit times the whole). */
  async apply(w: Write, session?: ClientSession): Promise<Doc | null> {
    return this.translate(async () => {
      if (w.op === 'insert') {
        await this.coll.insertOne(toStored(w.doc), { session })
        return w.doc
      }
      if (w.op === 'upsert') {
        const { _id, ...rest } = toStored(w.doc)
        await this.coll.replaceOne({ _id }, rest, { upsert: true, session })
        return w.doc
      }
      const update = updateOf(w.set, w.unset ?? [])
      if (!update) return fromStored<Doc>(await this.coll.findOne({ _id: w.id }, { session }))
      return fromStored<Doc>(await this.coll.findOneAndUpdate({ _id: w.id }, update as UpdateFilter<Stored>, { returnDocument: 'after', session }))
    })
  }

  private q(filter: Filter, ...extra: Document[]): MongoFilter<Stored> {
    return toMongoFilter(filter, ...extra) as MongoFilter<Stored>
  }

  async insert(doc: T): Promise<T> {
    const stored = toStored(doc)
    await this.write(() => this.coll.insertOne(stored))
    return doc
  }

  async get(id: string): Promise<T | null> {
    return fromStored<T>(await this.coll.findOne({ _id: id }))
  }

  /** Made on every read: other processes write the collection, so nothing here can know it is unchanged. */
  async view<V>(id: string, view: DocView<T, V>): Promise<Readonly<V> | null> {
    const doc = await this.get(id)
    return doc === null ? null : view(doc)
  }

  async findOne(filter: Filter): Promise<T | null> {
    return fromStored<T>(await this.coll.findOne(this.q(filter)))
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const cursor = this.coll.find(this.q(filter))
    if (options.sort?.length) cursor.sort(toMongoSort(options.sort))
    if (options.limit !== undefined) {
      // Mongo reads limit 0 as "no limit"; the port means none.
      if (assertLimit(options.limit) === 0) return []
      cursor.limit(options.limit)
    }
    return (await cursor.toArray()).map((d) => fromStored<T>(d)!)
  }

  async page(filter: Filter, limit: number, after?: PageAfter | null): Promise<T[]> {
    if (assertLimit(limit) === 0) return []
    const q = after ? this.q(filter, ...afterClauses(after)) : this.q(filter)
    const docs = await this.coll.find(q).sort(PAGE_SORT).limit(limit).toArray()
    return docs.map((d) => fromStored<T>(d)!)
  }

  async replace(doc: T): Promise<boolean> {
    const { _id, ...rest } = toStored(doc)
    const result = await this.write(() => this.coll.replaceOne({ _id }, rest))
    return result.matchedCount > 0
  }

  async update(id: string, set: Record<string, unknown>, unset: string[] = []): Promise<T | null> {
    const update = updateOf(set, unset)
    if (!update) return this.get(id)
    const after = await this.write(() => this.coll.findOneAndUpdate({ _id: id }, update as UpdateFilter<Stored>, { returnDocument: 'after' }))
    return fromStored<T>(after)
  }

  async upsert(doc: T): Promise<void> {
    const { _id, ...rest } = toStored(doc)
    await this.write(() => this.coll.replaceOne({ _id }, rest, { upsert: true }))
  }

  async delete(id: string): Promise<boolean> {
    return (await this.coll.deleteOne({ _id: id })).deletedCount > 0
  }

  async deleteMany(filter: Filter): Promise<number> {
    return (await this.coll.deleteMany(this.q(filter))).deletedCount
  }

  async count(filter: Filter): Promise<number> {
    return this.coll.countDocuments(this.q(filter))
  }

  async sum(path: string, filter: Filter): Promise<number> {
    const pipeline = [{ $match: this.q(filter) }, { $group: { _id: null, s: { $sum: `$${mongoPath(path)}` } } }]
    const [row] = await this.coll.aggregate<{ s: number }>(pipeline).toArray()
    return row ? Number(row.s) : 0
  }

  async group(filter: Filter, options: GroupOptions): Promise<Group[]> {
    const sums = options.sum ?? []
    const $group: Document = { _id: groupKey(options.by), n: { $sum: 1 } }
    sums.forEach((p, i) => {
      $group[`s${i}`] = { $sum: `$${mongoPath(p)}` }
    })
    const rows = await this.coll.aggregate<Document>([{ $match: this.q(filter) }, { $group }]).toArray()
    return rows
      .map((r) => ({
        key: (r._id ?? null) as Scalar,
        count: Number(r.n),
        sums: Object.fromEntries(sums.map((p, i) => [p, Number(r[`s${i}`] ?? 0)])),
      }))
      .sort((a, b) => compareKeys(a.key, b.key))
  }
}
