/**
 * The SQLite store's document cache (src/store/doc-cache.ts), on in exclusive mode: a read by id
 * must answer what SQLite would, whatever wrote in between — every write path of a collection, a
 * store commit, a batch that rolled back, a transaction a caller began and rolled back — and
 * nobody else may write the file while it is on.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DocCache } from '../../src/store/doc-cache'
import type { Collection } from '../../src/store/port'
import { openSqliteStore, type SqliteStore, StoreLockedError } from '../../src/store/sqlite'

const dir = mkdtempSync(join(tmpdir(), 'store-doc-cache-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Row = { id: string; n: number; workspaceId?: string; text?: string }
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))
let files = 0

async function exclusiveStore(): Promise<{ store: SqliteStore; rows: Collection<Row> }> {
  const store = await openSqliteStore(join(dir, `s${++files}.db`), { exclusive: true })
  const rows = await store.collection<Row>({ name: 'rows', indexes: [{ name: 'ws', fields: [['workspaceId', 1]] }] })
  return { store, rows }
}

/** A view (Collection.view): made from the row alone; `made` counts how often it ran. */
let made = 0
const summary = (row: Row) => {
  made++
  return { id: row.id, twice: row.n * 2 }
}
const summaryOf = (row: Row | null) => (row ? { id: row.id, twice: row.n * 2 } : null)

/** The row as SQLite has it, bypassing the collection and its cache. */
function stored(store: SqliteStore, id: string): Row | null {
  const row = store.db.query<{ doc: string }, [string]>('SELECT doc FROM rows WHERE id = ?').get(id)
  return row ? (JSON.parse(row.doc) as Row) : null
}

describe('document cache: a write between two reads in separate turns is seen', () => {
  const writes: [string, (store: SqliteStore, rows: Collection<Row>) => Promise<unknown>, Row | null][] = [
    ['update', (_, rows) => rows.update('a', { n: 2 }), { id: 'a', n: 2, workspaceId: 'w' }],
    ['update with unset', (_, rows) => rows.update('a', {}, ['workspaceId']), { id: 'a', n: 1 }],
    ['replace', (_, rows) => rows.replace({ id: 'a', n: 3 }), { id: 'a', n: 3 }],
    ['upsert', (_, rows) => rows.upsert({ id: 'a', n: 4, workspaceId: 'v' }), { id: 'a', n: 4, workspaceId: 'v' }],
    ['delete', (_, rows) => rows.delete('a'), null],
    ['deleteMany', (_, rows) => rows.deleteMany({ workspaceId: 'w' }), null],
    ['delete, then insert', async (_, rows) => (await rows.delete('a')) && rows.insert({ id: 'a', n: 5 }), { id: 'a', n: 5 }],
    ['commit: update', (store) => store.commit([{ collection: 'rows', op: 'update', id: 'a', set: { n: 6 } }]), { id: 'a', n: 6, workspaceId: 'w' }],
    ['commit: upsert', (store) => store.commit([{ collection: 'rows', op: 'upsert', doc: { id: 'a', n: 7 } }]), { id: 'a', n: 7 }],
  ]
  for (const [name, write, expected] of writes) {
    test(name, async () => {
      const { store, rows } = await exclusiveStore()
      await rows.insert({ id: 'a', n: 1, workspaceId: 'w' })
      await nextTurn()
      // Read twice in separate turns: the second answer came from the cache.
      expect(await rows.get('a')).toEqual({ id: 'a', n: 1, workspaceId: 'w' })
      await nextTurn()
      expect(await rows.get('a')).toEqual({ id: 'a', n: 1, workspaceId: 'w' })
      // The view too: made once for this version, then the same frozen value.
      const view = await rows.view('a', summary)
      expect(view).toEqual({ id: 'a', twice: 2 })
      await nextTurn()
      expect(await rows.view('a', summary)).toBe(view!)
      await nextTurn()
      await write(store, rows)
      await nextTurn()
      expect(await rows.view('a', summary)).toEqual(summaryOf(expected))
      expect(await rows.get('a')).toEqual(expected)
      expect(stored(store, 'a')).toEqual(expected)
      await store.close()
    })
  }

  test('a write issued but not yet committed is seen by the next read, as without the cache', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    const pending = rows.update('a', { n: 2 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 2 })
    await pending
    await nextTurn()
    expect(await rows.get('a')).toEqual({ id: 'a', n: 2 })
    await store.close()
  })

  test('a commit whose later write fails leaves the earlier one undone, in the cache too', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    await rows.insert({ id: 'b', n: 1 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    const failed = store.commit([
      { collection: 'rows', op: 'update', id: 'a', set: { n: 2 } },
      { collection: 'rows', op: 'insert', doc: { id: 'b', n: 2 } },
    ])
    await expect(failed).rejects.toThrow('duplicate key')
    await nextTurn()
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
  })
})

describe('document cache: what a transaction that ends without committing read is not kept', () => {
  test('a batch whose COMMIT fails rolls back, and a read made inside it is forgotten', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    // A deferred foreign key is checked at COMMIT: a row breaking it makes the batch's COMMIT fail.
    store.db.run('PRAGMA foreign_keys=ON')
    store.db.run('CREATE TABLE parent (id TEXT PRIMARY KEY)')
    store.db.run('CREATE TABLE child (parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)')
    const update = rows.update('a', { n: 2 })
    // Read inside the batch: the uncommitted n = 2, which the cache may keep only while the batch lives.
    expect(await rows.get('a')).toEqual({ id: 'a', n: 2 })
    expect(await rows.view('a', summary)).toEqual({ id: 'a', twice: 4 })
    store.db.run("INSERT INTO child VALUES ('nobody')")
    await expect(update).rejects.toThrow('FOREIGN KEY')
    expect(stored(store, 'a')).toEqual({ id: 'a', n: 1 })
    expect(await rows.view('a', summary)).toEqual({ id: 'a', twice: 2 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
  })

  test('a batch SQLite ends after a failed write (a full disk) is abandoned, and a read made inside it is forgotten', async () => {
    const { store, rows } = await exclusiveStore()
    for (let i = 0; i < 20; i++) await rows.insert({ id: `a${i}`, n: 1, text: 'x'.repeat(1000) })
    // No page beyond those the file has: a write that needs one fails as on a full disk (disk-space.test.ts).
    const { page_count } = store.db.query<{ page_count: number }, []>('PRAGMA page_count').get()!
    store.db.run(`PRAGMA max_page_count=${page_count}`)
    const update = rows.update('a1', { n: 2 })
    expect((await rows.get('a1'))?.n).toBe(2)
    await expect(rows.insert({ id: 'big', n: 0, text: 'x'.repeat(100_000) })).rejects.toThrow('full')
    await expect(update).rejects.toThrow('full')
    expect(stored(store, 'a1')?.n).toBe(1)
    expect((await rows.get('a1'))?.n).toBe(1)
    store.db.run('PRAGMA max_page_count=1073741823')
    await store.close()
  })

  test('a batch whose transaction someone else rolled back: what was read inside it is forgotten', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    void rows.update('a', { n: 2 }).catch(() => {})
    expect(await rows.get('a')).toEqual({ id: 'a', n: 2 })
    store.db.run('ROLLBACK')
    await nextTurn()
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
  })

  test('a read inside a transaction the caller began and rolled back is not kept', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    store.db.run('BEGIN')
    await rows.update('a', { n: 2 }) // joins the caller's transaction
    expect(await rows.get('a')).toEqual({ id: 'a', n: 2 })
    expect(await rows.view('a', summary)).toEqual({ id: 'a', twice: 4 })
    store.db.run('ROLLBACK')
    expect(await rows.view('a', summary)).toEqual({ id: 'a', twice: 2 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
  })

  test('a read after close fails instead of answering from memory', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
    await expect(rows.get('a')).rejects.toThrow()
  })
})

describe('document cache: views', () => {
  test('a view is made once per version of its document, shared and frozen; none for a missing document', async () => {
    const { store, rows } = await exclusiveStore()
    await rows.insert({ id: 'a', n: 1 })
    await nextTurn()
    made = 0
    const first = await rows.view('a', summary)
    await nextTurn()
    const again = await rows.view('a', summary)
    expect(again).toBe(first!)
    expect(made).toBe(1)
    expect(Object.isFrozen(first)).toBe(true)
    expect(await rows.view('nobody', summary)).toBeNull()
    await rows.update('a', { n: 5 })
    await nextTurn()
    expect(await rows.view('a', summary)).toEqual({ id: 'a', twice: 10 })
    expect(made).toBe(2)
    await store.close()
  })

  test('a view is counted against the budget and given back with its document', () => {
    const cache = new DocCache(1_000_000)
    const docs = cache.of('rows')
    docs.set('a', JSON.stringify({ id: 'a', n: 1 }))
    const alone = cache.chars
    expect(docs.viewOf('a', summary)).toEqual({ id: 'a', twice: 2 })
    expect(cache.chars).toBe(2 * alone)
    docs.delete('a')
    expect(cache.chars).toBe(0)
    expect(docs.viewOf('a', summary)).toBeUndefined()
  })
})

describe('document cache: nobody else writes the file while it is on', () => {
  test('an exclusive owner refuses a shared opener, and a shared opener refuses an exclusive one', async () => {
    const file = join(dir, 'claims.db')
    const owner = await openSqliteStore(file, { exclusive: true })
    const refused = await openSqliteStore(file).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(StoreLockedError)
    expect((refused as Error).message).toContain('SQLITE_LOCKING=shared')
    await owner.close()
    const [one, two] = [await openSqliteStore(file), await openSqliteStore(file)]
    expect(await openSqliteStore(file, { exclusive: true }).catch((e: unknown) => e)).toBeInstanceOf(StoreLockedError)
    await one.close()
    await two.close()
    const again = await openSqliteStore(file, { exclusive: true })
    await again.close()
  })
})

describe('document cache: bounded', () => {
  test('least recently used documents go once the budget is spent; a document too large for it is not kept', () => {
    const cache = new DocCache(20_000)
    const [c, other] = [cache.of('c'), cache.of('other')]
    // ~330 characters an entry with its overhead: about 60 fit.
    const json = (n: number) => JSON.stringify({ id: `d${n}`, text: 'x'.repeat(200) })
    other.set('o', json(0))
    for (let i = 0; i < 40; i++) c.set(`d${i}`, json(i))
    expect(c.get('d0')).toBe(json(0)) // d0 is now the most recent
    for (let i = 40; i < 80; i++) c.set(`d${i}`, json(i))
    expect(cache.chars).toBeLessThanOrEqual(20_000)
    expect(c.get('d1')).toBeUndefined()
    expect(c.get('d0')).toBe(json(0))
    expect(c.get('d79')).toBe(json(79))
    // Room is made in the collection taking the entry first.
    expect(other.get('o')).toBe(json(0))
    // Longer than 1/64 of the budget (312 characters): not kept, nothing pushed out.
    const held = cache.chars
    c.set('big', 'x'.repeat(400))
    expect(c.get('big')).toBeUndefined()
    expect(cache.chars).toBe(held)
  })

  test('a collection that takes an entry makes room in the others when it has none of its own to give', () => {
    const cache = new DocCache(5_000)
    const [a, b] = [cache.of('a'), cache.of('b')]
    for (let i = 0; i < 4; i++) a.set(`d${i}`, 'x'.repeat(70))
    for (let i = 0; i < 40; i++) b.set(`d${i}`, 'y'.repeat(70))
    expect(cache.chars).toBeLessThanOrEqual(5_000)
    expect(b.get('d39')).toBe('y'.repeat(70))
  })

  test("a collection-wide write drops that collection's documents only", () => {
    const cache = new DocCache()
    const [a, b] = [cache.of('a'), cache.of('b')]
    a.set('1', '{"id":"1"}')
    b.set('1', '{"id":"1"}')
    a.clear()
    expect(a.get('1')).toBeUndefined()
    expect(b.get('1')).toBe('{"id":"1"}')
    expect(cache.chars).toBe(1 + 10 + 100)
    a.set('1', '{"id":"1","n":2}')
    expect(a.get('1')).toBe('{"id":"1","n":2}')
  })
})
