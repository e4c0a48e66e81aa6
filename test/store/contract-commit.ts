/** Contract part three: `commit`, several writes on several collections, all or none. */
import { describe, expect, test } from 'bun:test'
import { DuplicateKeyError } from '../../src/store/port'
import { byEmail, type ContractContext } from './contract'

export function commitContract(ctx: ContractContext): void {
  describe('commit', () => {
    test('inserts, updates and upserts on two collections, each answered as its method would', async () => {
      const a = await ctx.fresh()
      const b = await ctx.fresh()
      await a.insert({ id: 'conv', status: 'active', n: 1 })
      await b.insert({ id: 'kept', v: 1 })
      const results = await ctx.store().commit([
        { collection: b.name, op: 'insert', doc: { id: 'msg', text: 'hello' } },
        { collection: a.name, op: 'update', id: 'conv', set: { status: 'escalated', 'meta.by': 'agent' }, unset: ['n'] },
        { collection: a.name, op: 'update', id: 'none', set: { status: 'x' } },
        { collection: b.name, op: 'upsert', doc: { id: 'kept', v: 2 } },
        { collection: b.name, op: 'upsert', doc: { id: 'made', v: 3 } },
      ])
      expect(results).toEqual([{ id: 'msg', text: 'hello' }, { id: 'conv', status: 'escalated', meta: { by: 'agent' } }, null, { id: 'kept', v: 2 }, { id: 'made', v: 3 }])
      expect(await b.get('msg')).toEqual({ id: 'msg', text: 'hello' })
      expect(await a.get('conv')).toEqual({ id: 'conv', status: 'escalated', meta: { by: 'agent' } })
      expect(await a.get('none')).toBeNull()
      expect((await b.find({}, { sort: [['id', 1]] })).map((d) => d.id)).toEqual(['kept', 'made', 'msg'])
    })

    test('a write that fails (a duplicate key) leaves none of them: the earlier ones are undone', async () => {
      const store = ctx.store()
      const a = await ctx.fresh()
      const b = await ctx.fresh([byEmail])
      await a.insert({ id: 'conv', status: 'active' })
      await b.insert({ id: 'x', workspaceId: 'w', email: 'taken' })
      const failed = store.commit([
        { collection: a.name, op: 'update', id: 'conv', set: { status: 'escalated' } },
        { collection: a.name, op: 'insert', doc: { id: 'new' } },
        { collection: b.name, op: 'insert', doc: { id: 'y', workspaceId: 'w', email: 'taken' } },
      ])
      const error = await failed.then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(DuplicateKeyError)
      expect((error as DuplicateKeyError).collection).toBe(b.name)
      expect((error as DuplicateKeyError).index).toBe('ws_email')
      // A standalone MongoDB server has no transactions (store.atomic false): the earlier writes stay.
      if (!store.atomic) return
      expect(await a.get('conv')).toEqual({ id: 'conv', status: 'active' })
      expect(await a.get('new')).toBeNull()
      expect(await b.get('y')).toBeNull()
      // The store goes on: the next commit and plain writes apply.
      await store.commit([{ collection: a.name, op: 'insert', doc: { id: 'after' } }])
      await a.insert({ id: 'plain' })
      expect((await a.find({}, { sort: [['id', 1]] })).map((d) => d.id)).toEqual(['after', 'conv', 'plain'])
    })

    test('a commit beside plain writes in flight: every write lands once', async () => {
      const a = await ctx.fresh()
      const b = await ctx.fresh()
      await Promise.all([
        a.insert({ id: 'p1' }),
        ctx.store().commit([
          { collection: a.name, op: 'insert', doc: { id: 'c1' } },
          { collection: b.name, op: 'insert', doc: { id: 'c2' } },
        ]),
        b.insert({ id: 'p2' }),
      ])
      expect((await a.find({}, { sort: [['id', 1]] })).map((d) => d.id)).toEqual(['c1', 'p1'])
      expect((await b.find({}, { sort: [['id', 1]] })).map((d) => d.id)).toEqual(['c2', 'p2'])
    })

    test('a collection not opened on the store is refused, and nothing is written', async () => {
      const a = await ctx.fresh()
      const refused = ctx.store().commit([
        { collection: a.name, op: 'insert', doc: { id: 'a1' } },
        { collection: 'never_opened_here', op: 'insert', doc: { id: 'b1' } },
      ])
      await expect(refused).rejects.toThrow(/never_opened_here/)
      expect(await a.get('a1')).toBeNull()
    })
  })
}
