/**
 * The store's disk full, under the real service: writes answer 507 naming the cause (not a bare
 * 500), `/ready` answers 507 with Retry-After while `/health` (liveness) stays 200, and both
 * recover once space is freed, without a restart. The full disk is SQLite's `max_page_count` on
 * the store's connection (SQLITE_FULL, as a full disk answers; no tmpfs or root needed).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SqliteStore } from '../../src/store/sqlite'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let store: SqliteStore
beforeAll(async () => {
  s = await startTestServer()
  if (!(s.server.services.store instanceof SqliteStore)) throw new Error('the embedded store is expected here')
  store = s.server.services.store
})
afterAll(() => s?.stop())

const ready = async () => {
  const res = await fetch(`${s.url}/ready`)
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any }
}

test('a full disk: writes 507 with the cause, /ready 507, /health 200; all well once space is freed', async () => {
  const dev = await s.developer()
  expect((await s.api('POST', '/agents', { key: dev.key, body: { name: 'Before' } })).status).toBe(201)
  expect(await ready()).toMatchObject({ status: 200, body: { ok: true, store: 'ok', coordination: 'ok' } })

  const { page_count } = store.db.query<{ page_count: number }, []>('PRAGMA page_count').get()!
  store.db.run(`PRAGMA max_page_count=${page_count}`)
  // Long instructions need fresh pages, as a real write does on a full disk.
  const refused = await s.api('POST', '/agents', { key: dev.key, body: { name: 'During', instructions: 'Be brief. '.repeat(790) } })
  expect(refused.status).toBe(507)
  expect(refused.headers.get('retry-after')).toBe('60')
  expect(refused.body.error).toContain('out of disk space')
  expect((await fetch(`${s.url}/health`)).status).toBe(200)
  const r = await ready()
  expect(r).toMatchObject({ status: 507, retryAfter: '60', body: { ok: false, status: 'disk_full', store: 'disk_full', coordination: 'ok' } })
  expect(r.body.cause).toContain('store (sqlite)')
  expect(r.body.cause).toContain('database or disk is full')

  store.db.run('PRAGMA max_page_count=1073741823')
  expect(await ready()).toMatchObject({ status: 200, body: { ok: true } })
  expect((await s.api('POST', '/agents', { key: dev.key, body: { name: 'After', instructions: 'Be brief. '.repeat(790) } })).status).toBe(201)
  const names = (await s.api('GET', '/agents', { key: dev.key })).body.items.map((a: { name: string }) => a.name)
  expect(names).toContain('After')
  expect(names).not.toContain('During')
})
