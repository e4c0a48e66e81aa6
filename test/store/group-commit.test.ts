import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GroupCommit } from '../../src/store/group-commit'
import { DuplicateKeyError } from '../../src/store/port'
import { openSqliteStore } from '../../src/store/sqlite'

const dir = mkdtempSync(join(tmpdir(), 'store-group-commit-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Row = { id: string; n: number }

/** What another process would see: a separate read-only connection to the same file. */
function committedIds(file: string): string[] {
  const other = new Database(file, { readonly: true })
  try {
    return other
      .query<{ id: string }, []>('SELECT id FROM rows ORDER BY id')
      .all()
      .map((r) => r.id)
  } finally {
    other.close()
  }
}

describe('sqlite group commit', () => {
  test('writes of one turn share one commit, and each resolves only once it is committed', async () => {
    const file = join(dir, 'batch.db')
    const store = await openSqliteStore(file) // shared locking, so a second connection can read
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    const writes = [rows.insert({ id: 'a', n: 1 }), rows.insert({ id: 'b', n: 2 }), rows.upsert({ id: 'c', n: 3 })]
    // Same connection: the batch is visible to our own reads at once; not yet to anyone else.
    expect(await rows.get('b')).toEqual({ id: 'b', n: 2 })
    expect(store.db.inTransaction).toBe(true)
    expect(committedIds(file)).toEqual([])
    await Promise.all(writes)
    expect(store.db.inTransaction).toBe(false)
    expect(committedIds(file)).toEqual(['a', 'b', 'c'])
    await store.close()
  })

  test('the commit observer hears each batch that wrote, not a read-only turn', async () => {
    const heard: number[] = []
    const store = await openSqliteStore(join(dir, 'observed.db'), { exclusive: true, onCommit: (s) => heard.push(s) })
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    await Promise.all([rows.insert({ id: 'a', n: 1 }), rows.insert({ id: 'b', n: 2 })])
    await rows.insert({ id: 'c', n: 3 })
    // Exclusive: a read opens the turn's transaction, and its commit is no write.
    await rows.get('a')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(heard.length).toBe(2)
    for (const seconds of heard) expect(seconds).toBeGreaterThanOrEqual(0)
    await store.close()
  })

  test('after a batch of several writes the next waits out a 2 ms gap; after a lone write, the next commits on the next turn', async () => {
    const store = await openSqliteStore(join(dir, 'gap.db'))
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))
    // A lone write: committed by the turn after it (its commit was queued first).
    await rows.insert({ id: 'lone', n: 0 })
    const single = rows.insert({ id: 'single', n: 1 })
    await nextTurn()
    expect(store.db.inTransaction).toBe(false)
    await single
    // A busy batch (concurrent writers): the write after it is still uncommitted a turn later.
    await Promise.all(Array.from({ length: 8 }, (_, i) => rows.insert({ id: `b${i}`, n: i })))
    const held = rows.insert({ id: 'held', n: 2 })
    await nextTurn()
    expect(store.db.inTransaction).toBe(true)
    await held
    // It carried one write: the next is not held.
    const after = rows.insert({ id: 'after', n: 3 })
    await nextTurn()
    expect(store.db.inTransaction).toBe(false)
    await after
    await store.close()
  })

  test("two connections of one process to one file: a batch opening while the other's is open commits that one first instead of blocking the thread", async () => {
    // Before, the second BEGIN IMMEDIATE busy-waited on this same thread for a commit that could
    // not run until it returned: 5 s of busy_timeout, then "database is locked" (two instances in
    // one test process, SQLITE_LOCKING=shared).
    const file = join(dir, 'two-connections.db')
    const a = await openSqliteStore(file)
    const b = await openSqliteStore(file)
    const onA = await a.collection<Row>({ name: 'rows', indexes: [] })
    const onB = await b.collection<Row>({ name: 'rows', indexes: [] })
    const first = onA.insert({ id: 'a1', n: 1 })
    expect(a.db.inTransaction).toBe(true)
    const second = onB.insert({ id: 'b1', n: 2 }) // same turn: A's batch is still open
    expect(a.db.inTransaction).toBe(false)
    expect(committedIds(file)).toEqual(['a1'])
    const third = onA.insert({ id: 'a2', n: 3 })
    await Promise.all([first, second, third])
    expect(committedIds(file)).toEqual(['a1', 'a2', 'b1'])
    await b.close()
    await a.close()
  })

  test('a duplicate key fails only its own write; the rest of the batch commits', async () => {
    const file = join(dir, 'dup.db')
    const store = await openSqliteStore(file)
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    await rows.insert({ id: 'a', n: 1 })
    const ok = rows.insert({ id: 'b', n: 2 })
    const dup = rows.insert({ id: 'a', n: 9 })
    const after = rows.update('b', { n: 3 })
    await expect(dup).rejects.toBeInstanceOf(DuplicateKeyError)
    await ok
    expect(await after).toEqual({ id: 'b', n: 3 })
    expect(committedIds(file)).toEqual(['a', 'b'])
    expect(await rows.get('a')).toEqual({ id: 'a', n: 1 })
    await store.close()
  })

  test('a write never awaited is still committed by close()', async () => {
    const file = join(dir, 'close.db')
    const store = await openSqliteStore(file)
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    void rows.insert({ id: 'late', n: 1 })
    await store.close()
    expect(committedIds(file)).toEqual(['late'])
  })

  test("inside a transaction the caller began, writes join it and the caller's commit decides", async () => {
    const file = join(dir, 'outer.db')
    const store = await openSqliteStore(file)
    const rows = await store.collection<Row>({ name: 'rows', indexes: [] })
    store.db.run('BEGIN')
    await rows.insert({ id: 'kept', n: 1 }) // resolves without waiting for a commit it does not own
    store.db.run('ROLLBACK')
    expect(await rows.get('kept')).toBeNull()
    await rows.insert({ id: 'next', n: 2 })
    expect(committedIds(file)).toEqual(['next'])
    await store.close()
  })
})

test('a batch whose connection was closed under it (a store closed without a flush) is settled, not thrown into the next batch on the file', async () => {
  const file = join(dir, 'closed-under.db')
  const first = new Database(file)
  first.run('CREATE TABLE rows (id TEXT PRIMARY KEY)')
  const lost = new GroupCommit(first).run(() => first.run("INSERT INTO rows VALUES ('a')"))
  first.close()
  const second = new Database(file)
  // Opening the next batch on the file commits the file's other open batches first: the closed one included.
  const kept = new GroupCommit(second).run(() => second.run("INSERT INTO rows VALUES ('b')"))
  await expect(lost).rejects.toThrow()
  await kept
  expect(second.query<{ id: string }, []>('SELECT id FROM rows ORDER BY id').all()).toEqual([{ id: 'b' }])
  second.close()
})
