/**
 * The embedded store and a full disk. The disk is simulated portably (no tmpfs, no root): SQLite's
 * `PRAGMA max_page_count` on the store's connection makes any write that needs a new page fail with
 * SQLITE_FULL, exactly as a full disk does. The WAL left by a process that could not checkpoint is a
 * real one: a child process writes and is killed with SIGKILL.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isOutOfSpace } from '../../src/store/out-of-space'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite'

const ROOT = join(import.meta.dir, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'store-disk-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Item {
  [field: string]: unknown
  id: string
  createdAt: string
  text: string
}
const item = (id: string, bytes = 1000): Item => ({ id, createdAt: '2026-01-01T00:00:00.000Z', text: 'x'.repeat(bytes) })

/** No page beyond those the file has now: the next write that needs one fails as on a full disk. */
function fillDisk(store: SqliteStore): void {
  const { page_count } = store.db.query<{ page_count: number }, []>('PRAGMA page_count').get()!
  store.db.run(`PRAGMA max_page_count=${page_count}`)
}
const freeDisk = (store: SqliteStore) => store.db.run('PRAGMA max_page_count=1073741823')
const walBytes = (file: string) => {
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}

test('a write on a full disk fails as out of space; health says disk_full until space is freed', async () => {
  const store = await openSqliteStore(join(dir, 'full.db'))
  const c = await store.collection<Item>({ name: 'items', indexes: [] })
  for (let i = 0; i < 20; i++) await c.insert(item(`a${i}`))
  expect(await store.health()).toEqual({ ok: true })
  fillDisk(store)
  const failure = await c.insert(item('big', 64 * 1024)).catch((e: unknown) => e)
  expect(isOutOfSpace(failure)).toBe(true)
  const health = await store.health()
  expect(health).toMatchObject({ ok: false, cause: 'disk_full' })
  expect(health.ok === false && health.message).toContain('database or disk is full')
  // Still full: the probe write fails too, so it stays.
  expect(await store.health()).toMatchObject({ ok: false, cause: 'disk_full' })
  freeDisk(store)
  // The probe write goes through now: ready again without waiting for traffic.
  expect(await store.health()).toEqual({ ok: true })
  await c.insert(item('big', 64 * 1024))
  expect((await c.get('big'))?.text).toHaveLength(64 * 1024)
  await store.close()
})

test('the WAL a killed process left is copied in and emptied at open, before any write', async () => {
  const file = join(dir, 'left.db')
  // A writer that never checkpoints (SQLite's own checkpoint off, no worker): what it commits stays in the WAL.
  const writer = Bun.spawn(
    [
      process.execPath,
      '-e',
      `const { Database } = require('bun:sqlite')
       const db = new Database(${JSON.stringify(file)}, { create: true })
       db.run('PRAGMA journal_mode=WAL'); db.run('PRAGMA wal_autocheckpoint=0')
       db.run('CREATE TABLE t (id TEXT PRIMARY KEY, b BLOB)')
       const put = db.prepare('INSERT INTO t VALUES (?, zeroblob(4000))')
       db.transaction(() => { for (let i = 0; i < 2000; i++) put.run('r' + i) })()
       console.log('written')
       setInterval(() => {}, 1000)`,
    ],
    { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' },
  )
  const reader = writer.stdout.getReader()
  let out = ''
  while (!out.includes('written')) {
    const chunk = await reader.read()
    if (chunk.done) break
    out += new TextDecoder().decode(chunk.value)
  }
  writer.kill('SIGKILL')
  await writer.exited
  // ~8 MB of committed pages, in the WAL only.
  expect(walBytes(file)).toBeGreaterThan(4_000_000)
  const store = await openSqliteStore(file)
  expect(walBytes(file)).toBe(0)
  expect(store.db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n).toBe(2000)
  await store.close()
})

test('a WAL that grew in a burst is cut back to the limit once it starts over', async () => {
  const file = join(dir, 'burst.db')
  const limit = 256 * 1024
  const store = await openSqliteStore(file, { walSizeLimitBytes: limit })
  const c = await store.collection<Item>({ name: 'items', indexes: [] })
  // One transaction of ~4 MB: the WAL must hold all of it until the commit.
  await Promise.all(Array.from({ length: 1000 }, (_, i) => c.insert(item(`b${i}`, 4000))))
  expect(walBytes(file)).toBeGreaterThan(2_000_000)
  // Every frame copied in, then a write starts the WAL over: it is cut back to the limit. The
  // checkpointer thread's connection may be reading at that moment (then the WAL cannot start
  // over yet), so the pair is tried again for a while: on a loaded host a pass of that thread
  // has held it past a second. Without the limit no try shrinks it.
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline && walBytes(file) > limit) {
    store.db.query('PRAGMA wal_checkpoint(RESTART)').get()
    await c.upsert(item('after'))
    if (walBytes(file) > limit) await Bun.sleep(20)
  }
  expect(walBytes(file)).toBeLessThanOrEqual(limit)
  await store.close()
})
