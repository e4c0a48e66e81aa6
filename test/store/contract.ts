/**
 * The document-store contract: every adapter runs this suite and must pass it unchanged.
 * Each test works in its own fresh collection, so tests never see each other's documents.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Collection, type Doc, type DocumentStore, DuplicateKeyError, type IndexSpec } from '../../src/store/port'
import { commitContract } from './contract-commit'
import { queryContract } from './contract-queries'
import { scopedContract } from './contract-scoped'

export type Item = Doc & Record<string, unknown>

export interface ContractContext {
  store: () => DocumentStore
  open: () => Promise<DocumentStore>
  fresh: <T extends Doc = Item>(indexes?: IndexSpec[]) => Promise<Collection<T>>
}

export async function expectDuplicate(p: Promise<unknown>, collection: string, index: string): Promise<void> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(DuplicateKeyError)
  expect((error as DuplicateKeyError).collection).toBe(collection)
  expect((error as DuplicateKeyError).index).toBe(index)
}

export const byEmail: IndexSpec = {
  name: 'ws_email',
  fields: [
    ['workspaceId', 1],
    ['email', 1],
  ],
  unique: true,
}
export const byExternal: IndexSpec = {
  name: 'ws_external',
  fields: [
    ['workspaceId', 1],
    ['externalId', 1],
  ],
  unique: true,
  sparse: true,
}
export const byNewest: IndexSpec = {
  name: 'ws_newest',
  fields: [
    ['workspaceId', 1],
    ['createdAt', -1],
    ['id', -1],
  ],
}

export interface ContractOptions {
  /** The label in test names (default: the store's kind). */
  label?: string
  /**
   * A second store may open the same data while the first is open (false: the embedded store in
   * exclusive mode, which refuses a second opener by design; the tests that need one are skipped).
   */
  opensTwice?: boolean
}

export function storeContract(name: string, open: () => Promise<DocumentStore>, options: ContractOptions = {}): void {
  const opensTwice = options.opensTwice ?? true
  describe(`${options.label ?? name} store contract`, () => {
    let store: DocumentStore
    let n = 0
    const run = Math.random().toString(36).slice(2, 8)
    const ctx: ContractContext = {
      store: () => store,
      open,
      fresh: (indexes = []) => store.collection({ name: `c_${run}_${++n}`, indexes }),
    }
    beforeAll(async () => {
      store = await open()
    })
    afterAll(async () => {
      await store.close()
    })

    test('reports its kind', () => {
      expect(store.kind).toBe(name as 'sqlite' | 'mongodb')
    })

    test('a pipelined store applies a write as issued: a read sees it before the write settles', async () => {
      const c = await ctx.fresh()
      expect(c.pipelined).toBe(name === 'sqlite')
      if (!c.pipelined) return
      let settled = false
      const insert = c.insert({ id: 'p1', n: 1 }).then(() => (settled = true))
      expect(await c.get('p1')).toEqual({ id: 'p1', n: 1 })
      expect(settled).toBe(false)
      await insert
    })

    describe('insert and get', () => {
      test('a document round-trips with nested objects, arrays, numbers, booleans and nulls', async () => {
        const c = await ctx.fresh()
        const doc = { id: 'a1', name: 'Ada', n: 3, ratio: 0.25, on: true, off: false, none: null, tags: ['x', 'y'], voice: { answersCalls: true, lang: 'en' } }
        expect(await c.insert(doc)).toEqual(doc)
        const read = await c.get('a1')
        expect(read).toEqual(doc)
        expect(Object.keys(read!)).not.toContain('_id')
      })

      test('get of an unknown id is null', async () => {
        expect(await (await ctx.fresh()).get('nope')).toBeNull()
      })

      test('a view is made from the document as it is now, and null for an unknown id', async () => {
        const c = await ctx.fresh()
        const named = (doc: Item) => ({ id: doc.id, v: doc.v })
        await c.insert({ id: 'w', v: 1 })
        expect(await c.view('w', named)).toEqual({ id: 'w', v: 1 })
        expect(await c.view('w', named)).toEqual({ id: 'w', v: 1 })
        await c.update('w', { v: 2 })
        expect(await c.view('w', named)).toEqual({ id: 'w', v: 2 })
        await c.delete('w')
        expect(await c.view('w', named)).toBeNull()
        expect(await c.view('nope', named)).toBeNull()
      })

      test('a second insert with the same id is refused and keeps the first', async () => {
        const c = await ctx.fresh()
        await c.insert({ id: 'a', v: 1 })
        await expectDuplicate(c.insert({ id: 'a', v: 2 }), c.name, 'id')
        expect(await c.get('a')).toEqual({ id: 'a', v: 1 })
      })

      test('a document without a string id is refused', async () => {
        const c = await ctx.fresh()
        await expect(c.insert({ id: '' })).rejects.toThrow()
        await expect(c.insert({ id: 5 } as unknown as Item)).rejects.toThrow() // a number id, which the type refuses, on purpose
      })
    })

    describe('unique indexes', () => {
      test('a unique compound index refuses an equal pair and allows it in another workspace', async () => {
        const c = await ctx.fresh([byEmail])
        await c.insert({ id: '1', workspaceId: 'w1', email: 'a@x.io' })
        await expectDuplicate(c.insert({ id: '2', workspaceId: 'w1', email: 'a@x.io' }), c.name, 'ws_email')
        await c.insert({ id: '3', workspaceId: 'w2', email: 'a@x.io' })
        await c.insert({ id: '4', workspaceId: 'w1', email: 'b@x.io' })
        expect(await c.get('2')).toBeNull()
        expect(await c.count({})).toBe(3)
      })

      test('a sparse unique index allows many missing or null values and refuses equal ones', async () => {
        const c = await ctx.fresh([byExternal])
        await c.insert({ id: '1', workspaceId: 'w1' })
        await c.insert({ id: '2', workspaceId: 'w1' })
        await c.insert({ id: '3', workspaceId: 'w1', externalId: null })
        await c.insert({ id: '4', workspaceId: 'w1', externalId: null })
        await c.insert({ id: '5', workspaceId: 'w1', externalId: 'crm-1' })
        await expectDuplicate(c.insert({ id: '6', workspaceId: 'w1', externalId: 'crm-1' }), c.name, 'ws_external')
        await c.insert({ id: '7', workspaceId: 'w2', externalId: 'crm-1' })
        expect(await c.count({})).toBe(6)
        expect((await c.find({ externalId: 'crm-1' })).map((d) => d.id).sort()).toEqual(['5', '7'])
      })
    })

    describe('replace', () => {
      test('replaces the whole document and reports whether it existed', async () => {
        const c = await ctx.fresh()
        await c.insert({ id: 'a', keep: 1, gone: 2 })
        expect(await c.replace({ id: 'a', keep: 10 })).toBe(true)
        expect(await c.get('a')).toEqual({ id: 'a', keep: 10 })
        expect(await c.replace({ id: 'missing', keep: 1 })).toBe(false)
        expect(await c.get('missing')).toBeNull()
      })

      test('a replace that clashes on a unique index is refused and changes nothing', async () => {
        const c = await ctx.fresh([byEmail])
        await c.insert({ id: 'a', workspaceId: 'w', email: 'a' })
        await c.insert({ id: 'b', workspaceId: 'w', email: 'b' })
        await expectDuplicate(c.replace({ id: 'b', workspaceId: 'w', email: 'a' }), c.name, 'ws_email')
        expect(await c.get('b')).toEqual({ id: 'b', workspaceId: 'w', email: 'b' })
      })
    })

    describe('update', () => {
      const base = { id: 'a', name: 'Ada', voice: { answersCalls: true, lang: 'en' }, n: 1 }

      test('sets top-level and dotted fields, keeping siblings, and returns the new document', async () => {
        const c = await ctx.fresh()
        await c.insert(base)
        const updated = await c.update('a', { name: 'Grace', 'voice.lang': 'de' })
        expect(updated).toEqual({ id: 'a', name: 'Grace', voice: { answersCalls: true, lang: 'de' }, n: 1 })
        expect(await c.get('a')).toEqual(updated)
      })

      test('creates missing intermediate objects and stores objects, arrays and nulls as values', async () => {
        const c = await ctx.fresh()
        await c.insert(base)
        const updated = await c.update('a', { 'limits.daily.calls': 5, meta: { a: [1, 2], b: 'x' }, name: null })
        expect(updated).toEqual({ ...base, limits: { daily: { calls: 5 } }, meta: { a: [1, 2], b: 'x' }, name: null })
        expect((await c.find({ name: null })).map((d) => d.id)).toEqual(['a'])
        expect((await c.find({ 'limits.daily.calls': 5 })).map((d) => d.id)).toEqual(['a'])
      })

      test('unsets top-level and dotted paths (a missing path is no error), with or without sets', async () => {
        const c = await ctx.fresh()
        await c.insert(base)
        expect(await c.update('a', {}, ['n', 'voice.lang', 'not.there'])).toEqual({ id: 'a', name: 'Ada', voice: { answersCalls: true } })
        expect(await c.update('a', { n: 2 }, ['voice'])).toEqual({ id: 'a', name: 'Ada', n: 2 })
        expect(await c.update('a', {})).toEqual({ id: 'a', name: 'Ada', n: 2 })
      })

      test('returns null for an unknown id and creates nothing', async () => {
        const c = await ctx.fresh()
        expect(await c.update('ghost', { a: 1 })).toBeNull()
        expect(await c.get('ghost')).toBeNull()
      })

      test('a unique clash is refused and leaves the document unchanged; the id cannot be changed', async () => {
        const c = await ctx.fresh([byEmail, byExternal])
        await c.insert({ id: 'a', workspaceId: 'w', email: 'a', externalId: 'e1' })
        await c.insert({ id: 'b', workspaceId: 'w', email: 'b', externalId: 'e2' })
        await expectDuplicate(c.update('b', { email: 'a' }), c.name, 'ws_email')
        await expectDuplicate(c.update('b', { externalId: 'e1' }), c.name, 'ws_external')
        expect(await c.get('b')).toEqual({ id: 'b', workspaceId: 'w', email: 'b', externalId: 'e2' })
        // both leave the sparse index: no clash between two nulls or two missing values
        await c.update('a', { externalId: null })
        await c.update('b', {}, ['externalId'])
        await expect(c.update('a', { id: 'z' })).rejects.toThrow()
      })
    })

    describe('upsert and delete', () => {
      test('upsert inserts when missing and replaces the whole document when present', async () => {
        const c = await ctx.fresh()
        await c.upsert({ id: 'a', v: 1, old: true })
        expect(await c.get('a')).toEqual({ id: 'a', v: 1, old: true })
        await c.upsert({ id: 'a', v: 2 })
        expect(await c.get('a')).toEqual({ id: 'a', v: 2 })
        expect(await c.count({})).toBe(1)
      })

      test('upsert is refused on a unique clash', async () => {
        const c = await ctx.fresh([byEmail])
        await c.insert({ id: 'a', workspaceId: 'w', email: 'a' })
        await expectDuplicate(c.upsert({ id: 'b', workspaceId: 'w', email: 'a' }), c.name, 'ws_email')
        expect(await c.get('b')).toBeNull()
      })

      test('delete reports whether it removed; deleteMany removes only matches and counts them', async () => {
        const c = await ctx.fresh()
        for (const [id, ws] of [
          ['a', 'w1'],
          ['b', 'w1'],
          ['c', 'w2'],
          ['d', 'w1'],
        ])
          await c.insert({ id, workspaceId: ws })
        expect(await c.delete('a')).toBe(true)
        expect(await c.delete('a')).toBe(false)
        expect(await c.get('a')).toBeNull()
        expect(await c.deleteMany({ workspaceId: 'w1' })).toBe(2)
        expect(await c.deleteMany({ workspaceId: 'w1' })).toBe(0)
        expect((await c.find({})).map((d) => d.id)).toEqual(['c'])
      })
    })

    describe.if(opensTwice)('reopening', () => {
      test('opening a collection again keeps its data and indexes (index creation is idempotent)', async () => {
        const spec = { name: `reopen_${run}`, indexes: [byEmail, byExternal, byNewest] }
        const first = await store.collection<Item>(spec)
        await first.insert({ id: 'a', workspaceId: 'w', email: 'a', externalId: 'x', createdAt: '2026-01-01T00:00:00.000Z' })
        const again = await store.collection<Item>(spec)
        expect(await again.get('a')).not.toBeNull()

        const other = await open()
        try {
          const reopened = await other.collection<Item>(spec)
          expect(await reopened.get('a')).toEqual(await first.get('a'))
          await expectDuplicate(reopened.insert({ id: 'b', workspaceId: 'w', email: 'a' }), spec.name, 'ws_email')
          await expectDuplicate(reopened.insert({ id: 'c', workspaceId: 'w', email: 'c', externalId: 'x' }), spec.name, 'ws_external')
          await reopened.insert({ id: 'd', workspaceId: 'w', email: 'd' })
          expect(await first.count({})).toBe(2)
        } finally {
          await other.close()
        }
      })
    })

    describe.if(opensTwice)('an index that changed between versions', () => {
      test('another definition under the same name, or the same fields under a new name: rebuilt at open, data kept', async () => {
        const name = `changed_${run}`
        const before = await store.collection<Item>({
          name,
          indexes: [
            { name: 'ws_email', fields: [['email', 1]] },
            { name: 'by_code', fields: [['code', 1]] },
          ],
        })
        await before.insert({ id: 'a', workspaceId: 'w1', email: 'same', code: 'x' })
        await before.insert({ id: 'b', workspaceId: 'w2', email: 'same', code: 'y' })
        const later = await open()
        try {
          // Now unique over two fields, and `by_code` renamed.
          const after = await later.collection<Item>({ name, indexes: [byEmail, { name: 'code', fields: [['code', 1]] }] })
          expect((await after.find({}, { sort: [['id', 1]] })).map((d) => d.id)).toEqual(['a', 'b'])
          await expectDuplicate(after.insert({ id: 'c', workspaceId: 'w1', email: 'same' }), name, 'ws_email')
          expect(await after.find({ code: 'y' })).toEqual([{ id: 'b', workspaceId: 'w2', email: 'same', code: 'y' }])
        } finally {
          await later.close()
        }
        // Opening with the same spec again changes nothing (and fails nothing).
        const again = await open()
        try {
          await again.collection<Item>({ name, indexes: [byEmail, { name: 'code', fields: [['code', 1]] }] })
        } finally {
          await again.close()
        }
      })
    })

    queryContract(ctx)
    commitContract(ctx)
    scopedContract(ctx)
  })
}
