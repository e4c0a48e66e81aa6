import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../../src/store/index'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite'
import type { SqliteCollection } from '../../src/store/sqlite-collection'
import { until } from '../support/until'
import { byExternal, byNewest, type Item, storeContract } from './contract'

const dir = mkdtempSync(join(tmpdir(), 'store-sqlite-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

storeContract('sqlite', () => openSqliteStore(join(dir, 'contract.db')))
// The service's mode: reads share a turn's transaction and by-id reads are answered from the document cache.
storeContract('sqlite', () => openSqliteStore(join(dir, 'contract-exclusive.db'), { exclusive: true }), { label: 'sqlite exclusive', opensTwice: false })

/**
 * Writes ~3 MB through `store`, then waits (up to 5 s) for the database file to pass 3 MB: pages
 * reach the file only through a checkpoint, so its size shows the checkpointer's work.
 */
async function checkpointedSize(store: SqliteStore, file: string): Promise<number> {
  const c = await store.collection<Item>({ name: 'bulk', indexes: [] })
  for (let i = 0; i < 3000; i++) await c.insert({ id: `d${i}`, createdAt: '2026-01-01T00:00:00.000Z', text: 'x'.repeat(1000) } as Item)
  const size = () => Bun.file(file).size
  return until('the checkpointer to copy 3 MB into the file', size, (n) => n > 3_000_000, { withinMs: 5_000, everyMs: 50 })
}

describe('sqlite adapter', () => {
  test('opens the file in WAL mode with synchronous=NORMAL and a busy timeout', async () => {
    const file = join(dir, 'wal.db')
    const store = await openSqliteStore(file)
    expect(store.db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(store.db.query('PRAGMA synchronous').get()).toEqual({ synchronous: 1 })
    expect(store.db.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 })
    await store.close()
    // WAL is a property of the file: a plain connection sees it too.
    const plain = new Database(file, { readonly: true })
    expect(plain.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    plain.close()
  })

  test("checkpoints run on the checkpointer thread, not in the writer's commits", async () => {
    const file = join(dir, 'checkpoint.db')
    const store = await openSqliteStore(file, { exclusive: true })
    // The writer's own automatic checkpoint (an fsync inside a COMMIT on the event loop) is off.
    expect(store.db.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 })
    expect(await checkpointedSize(store, file)).toBeGreaterThan(3_000_000)
    await store.close()
    // The checkpointer let go before the writer closed, so the writer was last and removed the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false)
  })

  test('a store that ran filtered queries lets go of its file when it closes (no connection left behind)', async () => {
    const file = join(dir, 'close-prepared.db')
    const store = await openSqliteStore(file, { exclusive: true })
    const c = await store.collection<Item>({ name: 'things', indexes: [byExternal] })
    await c.insert({ id: 'a', createdAt: '2026-01-01T00:00:00.000Z', externalId: 'x' } as Item)
    // A filter's query is a statement the collection prepared and keeps.
    expect(await c.find({ externalId: 'x' })).toHaveLength(1)
    await store.close()
    // Only the last connection to close removes the WAL: one still open (kept by its statements) would not.
    expect(existsSync(`${file}-wal`)).toBe(false)
  })

  test('a write made while the store closes is committed, and the file is free for the next process', async () => {
    const file = join(dir, 'close-writing.db')
    const store = await openSqliteStore(file, { exclusive: true })
    const c = await store.collection<Item>({ name: 'things', indexes: [byExternal] })
    expect(await c.find({ externalId: 'x' })).toHaveLength(0)
    // A batch big enough that the next one waits out the commit gap (a timer, not the next turn).
    await Promise.all(Array.from({ length: 8 }, (_, i) => c.insert({ id: `d${i}`, createdAt: '2026-01-01T00:00:00.000Z' } as Item)))
    const closing = store.close()
    // A stopping service's last write lands while close waits for the checkpointer thread.
    const late = c.insert({ id: 'late', createdAt: '2026-01-01T00:00:00.000Z', externalId: 'x' } as Item)
    await closing
    await late
    const next = new Database(file)
    next.run('PRAGMA busy_timeout=200')
    next.run('BEGIN IMMEDIATE') // would fail "database is locked" behind a write transaction left open
    expect(next.query('SELECT id FROM things WHERE id = ?').get('late')).toEqual({ id: 'late' })
    next.run('COMMIT')
    next.close()
  })

  test('two stores opened at once on one file: the checkpointer keeps the file until the last one closes', async () => {
    const file = join(dir, 'checkpoint-shared.db')
    const [first, second] = await Promise.all([openSqliteStore(file), openSqliteStore(file)])
    await first.close()
    expect(await checkpointedSize(second, file)).toBeGreaterThan(3_000_000)
    await second.close()
  })

  test('under writes that never pause the WAL is rewound once it is long, instead of growing as long as the load lasts', async () => {
    // 1,500 writes a millisecond apart (never the ~30 ms pause SQLite's own rewind needs; about 2 s
    // here): the largest the WAL file gets. A count, not a span, so a slow machine writes as much.
    const largestWal = async (name: string, walRewindFrames?: number) => {
      const file = join(dir, name)
      const store = await openSqliteStore(file, { exclusive: true, walRewindFrames })
      const c = await store.collection<Item>({ name: 'steady', indexes: [] })
      let largest = 0
      for (let i = 0; i < 1_500; i++) {
        await c.insert({ id: `d${i}`, text: 'x'.repeat(100) } as Item)
        largest = Math.max(largest, Bun.file(`${file}-wal`).size)
        await Bun.sleep(1)
      }
      await store.close()
      return largest
    }
    const growing = await largestWal('wal-growing.db')
    const rewound = await largestWal('wal-rewound.db', 200)
    expect(growing).toBeGreaterThan(2_000_000)
    expect(rewound).toBeLessThan(growing / 2)
  }, 20_000)

  test('data and indexes survive close and reopen', async () => {
    const file = join(dir, 'reopen.db')
    const spec = { name: 'customers', indexes: [byExternal] }
    const first = await openSqliteStore(file)
    await (await first.collection<Item>(spec)).insert({ id: 'a', workspaceId: 'w', externalId: 'x', voice: { on: true } })
    await first.close()
    await first.close() // closing twice is harmless
    const second = await openSqliteStore(file)
    const c = await second.collection<Item>(spec)
    expect(await c.get('a')).toEqual({ id: 'a', workspaceId: 'w', externalId: 'x', voice: { on: true } })
    await expect(c.insert({ id: 'b', workspaceId: 'w', externalId: 'x' })).rejects.toThrow('ws_external')
    await second.close()
  })

  test('an unchanged index is left as it is at open (never rebuilt on every boot)', async () => {
    const file = join(dir, 'unchanged.db')
    const spec = { name: 'people', indexes: [byExternal, byNewest] }
    // Every DROP or CREATE that does something moves the schema version.
    const version = (store: SqliteStore) => store.db.query<{ schema_version: number }, []>('PRAGMA schema_version').get()!.schema_version
    const first = await openSqliteStore(file)
    await first.collection<Item>(spec)
    await first.close()
    const second = await openSqliteStore(file)
    const built = version(second)
    await second.collection<Item>(spec)
    expect(version(second)).toBe(built)
    await second.close()
  })

  test('openStore without a MongoDB URL opens service.db in the data dir, creating the dir', async () => {
    const dataDir = join(dir, 'nested', 'data')
    const store = await openStore({ dataDir })
    expect(store.kind).toBe('sqlite')
    expect(existsSync(join(dataDir, 'service.db'))).toBe(true)
    await store.close()
  })

  test('a query is prepared once and reused; statements of many shapes stay bounded and still answer right', async () => {
    const store = await openSqliteStore(':memory:')
    const c = await store.collection<Item>({ name: 'shapes', indexes: [] })
    // Element access reaches the private cache, still type-checked.
    // biome-ignore lint/complexity/useLiteralKeys: bracket access reads the private cache with its type checked
    const prepared = () => c['statements']
    for (let i = 0; i < 50; i++) await c.insert({ id: `d${i}`, n: i, workspaceId: 'w' } as Item)
    for (let i = 0; i < 20; i++) expect(await c.find({ workspaceId: 'w', n: i })).toEqual([{ id: `d${i}`, n: i, workspaceId: 'w' }])
    expect(prepared().size).toBe(1)
    // Every $in length is its own SQL: 300 shapes keep at most 200 statements, and the oldest, dropped, is prepared again when asked.
    for (let k = 1; k <= 300; k++) expect(await c.count({ n: { $in: Array.from({ length: k }, (_, i) => i) } })).toBe(Math.min(k, 50))
    expect(prepared().size).toBe(200)
    expect(await c.count({ n: { $in: [0] } })).toBe(1)
    await store.close()
  })

  test(':memory: works for throwaway stores', async () => {
    const store = await openSqliteStore(':memory:')
    const c = await store.collection<Item>({ name: 'm', indexes: [] })
    await c.insert({ id: '1' })
    expect(await c.count({})).toBe(1)
    await store.close()
  })

  describe('with 100,000 documents across 500 workspaces', () => {
    let store: SqliteStore
    let c: SqliteCollection<Item>
    const indexName = 'big__ws_newest'

    beforeAll(async () => {
      store = await openSqliteStore(join(dir, 'big.db'))
      c = await store.collection<Item>({ name: 'big', indexes: [byNewest, byExternal] })
      // One transaction: the inserts go through the adapter, the commit happens once.
      store.db.run('BEGIN')
      const start = Date.UTC(2026, 0, 1)
      for (let i = 0; i < 100_000; i++) {
        const createdAt = new Date(start + Math.floor(i / 3) * 1000).toISOString() // ties of three
        await c.insert({ id: `d${String(i).padStart(6, '0')}`, workspaceId: `w${i % 500}`, createdAt, kind: i % 2 ? 'a' : 'b' })
      }
      store.db.run('COMMIT')
    })
    afterAll(async () => {
      await store.close()
    })

    const expectIndexSearch = (plan: string[]) => {
      expect(plan.some((line) => line.startsWith(`SEARCH big USING INDEX ${indexName}`))).toBe(true)
      expect(plan.some((line) => line.startsWith('SCAN'))).toBe(false)
      expect(plan.some((line) => line.includes('TEMP B-TREE'))).toBe(false)
    }

    test('page({workspaceId}) searches the workspace+createdAt+id index without a scan or a sort', () => {
      const plan = c.explain({ workspaceId: 'w42' })
      expectIndexSearch(plan)
    })

    test('a following page seeks to its position in that index; an extra filter keeps the index', () => {
      const plan = c.explain({ workspaceId: 'w42' }, { createdAt: '2026-01-01T01:00:00.000Z', id: 'd010000' })
      expectIndexSearch(plan)
      expect(plan.join('\n')).toContain(`USING INDEX ${indexName} (k$workspaceId=? AND k$createdAt<?)`)
      expectIndexSearch(c.explain({ workspaceId: 'w42', kind: 'a' }))
    })

    test('pages return that workspace newest first', async () => {
      const first = await c.page({ workspaceId: 'w42' }, 20)
      expect(first).toHaveLength(20)
      expect(first.every((d) => d.workspaceId === 'w42')).toBe(true)
      expect(first[0].id).toBe('d099542')
      const last = first[19]
      const next = await c.page({ workspaceId: 'w42' }, 20, { createdAt: String(last.createdAt), id: last.id })
      expect(next[0].id < last.id).toBe(true)
      expect(await c.count({ workspaceId: 'w42' })).toBe(200)
    })
  })
})

describe('locking', () => {
  test('exclusive: a second opener of the same file is refused with a message naming the file; shared: both work', async () => {
    const { openSqliteStore, StoreLockedError } = await import('../../src/store/sqlite')
    const dir = mkdtempSync(join(tmpdir(), 'lock-'))
    const owner = await openSqliteStore(join(dir, 'a.db'), { exclusive: true })
    let caught: unknown
    try {
      await openSqliteStore(join(dir, 'a.db'), { exclusive: true })
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(StoreLockedError)
    expect((caught as Error).message).toContain('a.db')
    await owner.close()
    // Once the owner closes, the file can be opened again.
    const next = await openSqliteStore(join(dir, 'a.db'), { exclusive: true })
    await next.close()
    const one = await openSqliteStore(join(dir, 'b.db'))
    const two = await openSqliteStore(join(dir, 'b.db'))
    const c1 = await one.collection<any>({ name: 'things', indexes: [] })
    const c2 = await two.collection<any>({ name: 'things', indexes: [] })
    await c1.insert({ id: 'x', createdAt: '2026-01-01T00:00:00.000Z' })
    expect(await c2.get('x')).toMatchObject({ id: 'x' })
    await one.close()
    await two.close()
  })
})
