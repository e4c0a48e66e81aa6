/**
 * The embedded store's key columns (src/store/key-columns.ts): each holds what json_extract reads
 * from the stored document, through every kind of write, and a file written before key columns
 * existed is brought over on open.
 */

import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keyValue } from '../../src/store/key-columns'
import { type CollectionSpec, DuplicateKeyError } from '../../src/store/port'
import { openSqliteStore } from '../../src/store/sqlite'
import { keyColumn } from '../../src/store/sqlite-filter'

const dir = mkdtempSync(join(tmpdir(), 'store-keys-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const spec: CollectionSpec = {
  name: 'things',
  indexes: [
    {
      name: 'ws_created',
      fields: [
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    {
      name: 'flags',
      fields: [
        ['live', 1],
        ['n', 1],
        ['a.b', 1],
      ],
    },
    { name: 'code', fields: [['code', 1]], unique: true, sparse: true },
  ],
}
const paths = ['workspaceId', 'createdAt', 'live', 'n', 'a.b', 'code']

/** Every row's key columns against json_extract of its stored document. */
function mismatches(db: Database): string[] {
  const columns = paths.map(keyColumn)
  const rows = db.query<Record<string, unknown>, []>(`SELECT id, ${columns.map((c, i) => `${c} AS c${i}, json_extract(doc,'$.${paths[i]}') AS j${i}`).join(', ')} FROM things`).all()
  const out: string[] = []
  for (const row of rows)
    paths.forEach((p, i) => {
      if (row[`c${i}`] !== row[`j${i}`]) out.push(`${row.id}.${p}: column ${JSON.stringify(row[`c${i}`])}, document ${JSON.stringify(row[`j${i}`])}`)
    })
  return out
}

describe('key columns', () => {
  test('hold what json_extract reads, through insert, update, unset, replace, upsert and delete', async () => {
    const store = await openSqliteStore(join(dir, 'follow.db'))
    const c = await store.collection<any>(spec)
    const created = new Date(Date.UTC(2026, 10, 25, 12))
    await c.insert({ id: 'x1', workspaceId: 'w1', createdAt: created, live: true, n: 1.5, a: { b: 'deep' }, code: 'A' })
    await c.insert({ id: 'x2', workspaceId: 'w1', createdAt: '2026-11-25T13:00:00.000Z', live: false, n: Number.NaN, a: ['not', 'an', 'object'] })
    await c.insert({ id: 'x3', workspaceId: 'w2', createdAt: '2026-11-25T14:00:00.000Z', live: null, n: 7, a: { b: { c: [1, 2] } }, code: undefined })
    await c.insert({ id: 'x4', workspaceId: 'w2', createdAt: '2026-11-25T15:00:00.000Z', a: 'text', n: { nested: true } })
    expect(mismatches(store.db)).toEqual([])
    await c.update('x1', { live: false, 'a.b': 42 })
    await c.update('x2', { a: { b: true } }, ['live'])
    await c.update('x3', { summary: 'no key changes' })
    await c.replace({ id: 'x4', workspaceId: 'w3', createdAt: '2026-11-25T16:00:00.000Z', live: true, code: 'B' })
    await c.upsert({ id: 'x5', workspaceId: 'w3', createdAt: '2026-11-25T17:00:00.000Z', n: 2 })
    await c.upsert({ id: 'x5', workspaceId: 'w3', createdAt: '2026-11-25T17:00:00.000Z', n: 3, code: 'C' })
    await c.upsert({ id: 'x3', workspaceId: 'w2', createdAt: '2026-11-25T14:00:00.000Z', live: null, n: 7, a: { b: { c: [1, 2] } }, note: 'same keys' })
    expect(mismatches(store.db)).toEqual([])
    // Queries answer from the columns with the documents' meaning.
    expect((await c.find({ live: false })).map((d) => d.id).sort()).toEqual(['x1'])
    expect((await c.find({ 'a.b': 42 })).map((d) => d.id)).toEqual(['x1'])
    expect((await c.find({ 'a.b': true })).map((d) => d.id)).toEqual(['x2'])
    expect((await c.find({ n: { $gte: 3 } })).map((d) => d.id).sort()).toEqual(['x3', 'x5'])
    expect((await c.page({ workspaceId: 'w3' }, 10)).map((d) => d.id)).toEqual(['x5', 'x4'])
    await expect(c.update('x1', { code: 'C' })).rejects.toBeInstanceOf(DuplicateKeyError)
    await expect(c.insert({ id: 'x6', code: 'B' })).rejects.toMatchObject({ index: 'code' })
    expect(await c.deleteMany({ workspaceId: 'w2' })).toBe(1)
    expect(mismatches(store.db)).toEqual([])
    await store.close()
  })

  test('keyValue walks only into plain objects and reads values as their JSON', () => {
    const doc = { a: { b: 1 }, list: [1], s: 'text', when: new Date(0), t: true, o: { x: [1, { y: null }] } }
    expect(keyValue(doc, 'a.b')).toBe(1)
    expect(keyValue(doc, 'list.length')).toBeNull()
    expect(keyValue(doc, 's.length')).toBeNull()
    expect(keyValue(doc, 'when')).toBe('1970-01-01T00:00:00.000Z')
    expect(keyValue(doc, 't')).toBe(1)
    expect(keyValue(doc, 'o')).toBe('{"x":[1,{"y":null}]}')
    expect(keyValue(doc, 'constructor')).toBeNull()
    expect(keyValue(doc, 'missing.deeper')).toBeNull()
  })

  test('a file from before key columns: opening adds and fills them and rebuilds its indexes on them', async () => {
    const file = join(dir, 'old.db')
    const old = new Database(file, { create: true })
    old.run('PRAGMA journal_mode=WAL')
    old.run('CREATE TABLE "things" (id TEXT PRIMARY KEY, doc TEXT NOT NULL)')
    old.run(`CREATE INDEX "things__ws_created" ON "things" (json_extract(doc,'$.workspaceId'), json_extract(doc,'$.createdAt') DESC, id DESC)`)
    old.run(`CREATE UNIQUE INDEX "things__code" ON "things" (json_extract(doc,'$.code')) WHERE json_extract(doc,'$.code') IS NOT NULL`)
    const insert = old.query('INSERT INTO "things" (id, doc) VALUES (?, ?)')
    for (let i = 0; i < 50; i++) {
      insert.run(
        `d${i}`,
        JSON.stringify({
          id: `d${i}`,
          workspaceId: `w${i % 5}`,
          createdAt: `2026-11-25T12:00:${String(i).padStart(2, '0')}.000Z`,
          live: i % 2 === 0,
          n: i,
          a: { b: i % 3 },
          ...(i < 3 ? { code: `K${i}` } : {}),
        }),
      )
    }
    old.close()

    const store = await openSqliteStore(file)
    const c = await store.collection<any>(spec)
    expect(mismatches(store.db)).toEqual([])
    const indexes = store.db.query<{ name: string; sql: string }, []>(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'things' AND sql IS NOT NULL`).all()
    expect(indexes.map((i) => i.name).sort()).toEqual(['things__code', 'things__flags', 'things__ws_created'])
    expect(indexes.every((i) => !i.sql.includes('json_extract'))).toBe(true)
    expect(c.explain({ workspaceId: 'w1' }).join('\n')).toContain('USING INDEX things__ws_created')
    const page = await c.page({ workspaceId: 'w1' }, 3)
    expect(page.map((d) => d.id)).toEqual(['d46', 'd41', 'd36'])
    expect((await c.find({ live: true, 'a.b': 0 })).length).toBe(9)
    await expect(c.insert({ id: 'dx', code: 'K1' })).rejects.toMatchObject({ index: 'code' })
    await store.close()
    // Opening again changes nothing.
    const again = await openSqliteStore(file)
    await again.collection<any>(spec)
    expect(mismatches(again.db)).toEqual([])
    await again.close()
  })
})
