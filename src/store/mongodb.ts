/**
 * MongoDB adapter of the document-store port (production). Documents keep their string `id` as
 * `_id` (the primary index for free) and get it back as `id` on every read.
 */
import {
  MongoClient,
  MongoServerError,
  type Collection as MongoCollection,
  type Db,
  type Document,
  type Filter as MongoFilter,
  type UpdateFilter,
} from 'mongodb'
import {
  DuplicateKeyError,
  type Collection,
  type CollectionSpec,
  type CommitObserver,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type Group,
  type GroupOptions,
  type PageAfter,
  type Scalar,
} from './port'
import { assertLimit, assertName, assertPath, compareKeys, definedEntries } from './paths'
import { afterClauses, groupKey, mongoPath, PAGE_SORT, toIndexDescription, toMongoFilter, toMongoSort } from './mongo-filter'

interface Stored {
  _id: string
  [field: string]: unknown
}

export async function openMongoStore(url: string, dbName?: string, onCommit?: CommitObserver): Promise<MongoStore> {
  // ignoreUndefined: an undefined field is left out, as JSON.stringify does in the SQLite adapter.
  const client = new MongoClient(url, { ignoreUndefined: true })
  await client.connect()
  return new MongoStore(client, client.db(dbName), onCommit)
}

export class MongoStore implements DocumentStore {
  readonly kind = 'mongodb' as const
  private readonly collections = new Map<string, Promise<MongoDocCollection<Doc>>>()

  constructor(
    readonly client: MongoClient,
    readonly db: Db,
    private readonly onCommit?: CommitObserver,
  ) {}

  async collection<T extends Doc>(spec: CollectionSpec): Promise<MongoDocCollection<T>> {
    let c = this.collections.get(spec.name)
    if (!c) {
      c = MongoDocCollection.open<Doc>(this.db, spec, this.onCommit)
      this.collections.set(spec.name, c)
      c.catch(() => this.collections.delete(spec.name)) // a failed open is retried next time
    }
    return (await c) as unknown as MongoDocCollection<T>
  }

  async close(): Promise<void> {
    await this.client.close()
  }
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
    // createIndexes is idempotent for an identical index under the same name.
    if (spec.indexes.length) await coll.createIndexes(spec.indexes.map(toIndexDescription))
    return new MongoDocCollection<T>(name, coll, onCommit)
  }

  /** Every single-document write: each is its own commit on MongoDB, timed for the commit observer. */
  private async write<R>(run: () => Promise<R>): Promise<R> {
    const start = performance.now()
    try {
      const result = await run()
      this.onCommit?.((performance.now() - start) / 1000)
      return result
    } catch (e) {
      if (e instanceof MongoServerError && e.code === 11000) {
        const index = /index: (\S+) dup key/.exec(e.message)?.[1] ?? Object.keys(e.keyPattern ?? {}).join('_')
        throw new DuplicateKeyError(this.name, index === '_id_' || index === '_id' ? 'id' : index)
      }
      throw e
    }
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
    const entries = definedEntries(set)
    for (const path of [...entries.map(([p]) => p), ...unset]) {
      if (assertPath(path) === 'id' || path.startsWith('id.')) throw new Error('update cannot change the id')
    }
    if (entries.length === 0 && unset.length === 0) return this.get(id)
    const update: Document = {}
    if (entries.length) update.$set = Object.fromEntries(entries)
    if (unset.length) update.$unset = Object.fromEntries(unset.map((p) => [p, '']))
    const after = await this.write(() =>
      this.coll.findOneAndUpdate({ _id: id }, update as UpdateFilter<Stored>, { returnDocument: 'after' }),
    )
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
    sums.forEach((p, i) => ($group[`s${i}`] = { $sum: `$${mongoPath(p)}` }))
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
