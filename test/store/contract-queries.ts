/** Contract part two: filters, sorting, keyset paging, counts, sums and groups. */
import { beforeAll, describe, expect, test } from 'bun:test'
import type { Collection, Filter, FindOptions, Group } from '../../src/store/port'
import { byNewest, type ContractContext, type Item } from './contract'

// Mixed types on purpose: `n` holds numbers, a numeric string and a boolean; `flag` a number 1.
const FIXTURE: Item[] = [
  { id: 'a', n: 1, s: 'apple', flag: true, tag: null, voice: { answersCalls: true, lang: 'en', rank: 2 } },
  { id: 'b', n: 2, s: 'banana', flag: false, voice: { answersCalls: false, rank: 3 } },
  { id: 'c', n: 10, s: 'cherry', tag: 'x', voice: { lang: 'fr', rank: 1 } },
  { id: 'd', n: '10', s: 'date', flag: 1, tag: 'y' },
  { id: 'e', n: true, s: 'elder' },
  { id: 'f', s: 'fig', flag: null },
]

const ts = (day: number, hour: number, minute = 0) => new Date(Date.UTC(2026, 10, day, hour, minute)).toISOString()

export function queryContract(ctx: ContractContext): void {
  describe('filters', () => {
    let c: Collection<Item>
    const ids = async (filter: Filter, options?: FindOptions) => (await c.find(filter, options)).map((d) => d.id).sort()
    beforeAll(async () => {
      c = await ctx.fresh()
      for (const doc of FIXTURE) await c.insert(doc)
    })

    test('empty filter and plain equality on strings, numbers and booleans (no cross-type matches)', async () => {
      expect(await ids({})).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
      expect(await ids({ s: 'apple' })).toEqual(['a'])
      expect(await ids({ n: 10 })).toEqual(['c'])
      expect(await ids({ n: '10' })).toEqual(['d'])
      expect(await ids({ n: 1 })).toEqual(['a'])
      expect(await ids({ n: true })).toEqual(['e'])
      expect(await ids({ flag: true })).toEqual(['a'])
      expect(await ids({ flag: false })).toEqual(['b'])
      expect(await ids({ flag: 1 })).toEqual(['d'])
      expect(await ids({ s: "x' OR '1'='1" })).toEqual([])
    })

    test('null matches null or missing; $exists means present and not null', async () => {
      expect(await ids({ flag: null })).toEqual(['c', 'e', 'f'])
      expect(await ids({ tag: null })).toEqual(['a', 'b', 'e', 'f'])
      expect(await ids({ tag: { $eq: null } })).toEqual(['a', 'b', 'e', 'f'])
      expect(await ids({ tag: { $exists: true } })).toEqual(['c', 'd'])
      expect(await ids({ tag: { $exists: false } })).toEqual(['a', 'b', 'e', 'f'])
      expect(await ids({ 'voice.lang': { $exists: true } })).toEqual(['a', 'c'])
    })

    test('$eq and $ne (a missing field is not equal to a value)', async () => {
      expect(await ids({ s: { $eq: 'banana' } })).toEqual(['b'])
      expect(await ids({ tag: { $ne: 'x' } })).toEqual(['a', 'b', 'd', 'e', 'f'])
      expect(await ids({ tag: { $ne: null } })).toEqual(['c', 'd'])
      expect(await ids({ flag: { $ne: true } })).toEqual(['b', 'c', 'd', 'e', 'f'])
      expect(await ids({ n: { $ne: 1 } })).toEqual(['b', 'c', 'd', 'e', 'f'])
    })

    test('$in and $nin, with null and mixed types, and empty lists', async () => {
      expect(await ids({ s: { $in: ['apple', 'fig', 'zzz'] } })).toEqual(['a', 'f'])
      expect(await ids({ tag: { $in: ['x', null] } })).toEqual(['a', 'b', 'c', 'e', 'f'])
      expect(await ids({ n: { $in: [1, 10] } })).toEqual(['a', 'c'])
      expect(await ids({ flag: { $in: [true, 1] } })).toEqual(['a', 'd'])
      expect(await ids({ s: { $in: [] } })).toEqual([])
      expect(await ids({ tag: { $nin: ['x', 'y'] } })).toEqual(['a', 'b', 'e', 'f'])
      expect(await ids({ tag: { $nin: [null] } })).toEqual(['c', 'd'])
      expect(await ids({ flag: { $nin: [false, 1] } })).toEqual(['a', 'c', 'e', 'f'])
      expect(await ids({ s: { $nin: [] } })).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    })

    test('ranges compare numbers with numbers and strings with strings only', async () => {
      expect(await ids({ n: { $gt: 1 } })).toEqual(['b', 'c'])
      expect(await ids({ n: { $gte: 1, $lt: 10 } })).toEqual(['a', 'b'])
      expect(await ids({ n: { $lte: 2 } })).toEqual(['a', 'b'])
      expect(await ids({ n: { $gt: '' } })).toEqual(['d'])
      expect(await ids({ n: { $lt: 'z' } })).toEqual(['d'])
      expect(await ids({ s: { $gt: 'banana' } })).toEqual(['c', 'd', 'e', 'f'])
      expect(await ids({ s: { $gte: 'banana', $lte: 'cherry' } })).toEqual(['b', 'c'])
    })

    test('dotted paths, the id field, and several conditions together', async () => {
      expect(await ids({ 'voice.answersCalls': true })).toEqual(['a'])
      expect(await ids({ 'voice.answersCalls': false })).toEqual(['b'])
      expect(await ids({ 'voice.answersCalls': null })).toEqual(['c', 'd', 'e', 'f'])
      expect(await ids({ 'voice.lang': 'fr' })).toEqual(['c'])
      expect(await ids({ 'voice.rank': { $gte: 2 } })).toEqual(['a', 'b'])
      expect(await ids({ id: 'b' })).toEqual(['b'])
      expect(await ids({ id: { $in: ['a', 'c', 'zz'] } })).toEqual(['a', 'c'])
      expect(await ids({ id: { $gt: 'c' } })).toEqual(['d', 'e', 'f'])
      expect(await ids({ s: { $gt: 'a' }, n: { $lt: 5 }, flag: { $ne: false } })).toEqual(['a'])
    })

    test('findOne returns a match or null', async () => {
      expect((await c.findOne({ s: 'cherry' }))?.id).toBe('c')
      expect(await c.findOne({ s: 'nothing' })).toBeNull()
    })

    test('find sorts on one or more (dotted) fields and limits', async () => {
      const order = async (filter: Filter, options: FindOptions) => (await c.find(filter, options)).map((d) => d.id)
      const numbers = { n: { $gte: 0 } }
      expect(await order(numbers, { sort: [['n', 1]] })).toEqual(['a', 'b', 'c'])
      expect(await order(numbers, { sort: [['n', -1]] })).toEqual(['c', 'b', 'a'])
      expect(await order(numbers, { sort: [['n', -1]], limit: 2 })).toEqual(['c', 'b'])
      expect(await order(numbers, { sort: [['n', -1]], limit: 0 })).toEqual([])
      expect(await order({ 'voice.rank': { $gte: 0 } }, { sort: [['voice.rank', -1]] })).toEqual(['b', 'a', 'c'])
      expect(await order({ s: { $in: ['apple', 'banana', 'cherry'] } }, { sort: [['s', -1]] })).toEqual(['c', 'b', 'a'])
      expect(await order({}, { sort: [['id', -1]], limit: 3 })).toEqual(['f', 'e', 'd'])
      const multi = await ctx.fresh()
      for (const [id, grp, rank] of [
        ['p', 2, 1],
        ['q', 1, 1],
        ['r', 2, 5],
        ['s', 1, 9],
      ] as const)
        await multi.insert({ id, grp, rank })
      expect(
        (
          await multi.find(
            {},
            {
              sort: [
                ['grp', 1],
                ['rank', -1],
              ],
            },
          )
        ).map((d) => d.id),
      ).toEqual(['s', 'q', 'r', 'p'])
    })

    test('field paths and operators outside the grammar are refused', async () => {
      await expect(c.find({ "a') OR 1=1 --": 1 })).rejects.toThrow()
      await expect(c.find({ $where: 'sleep(1)' })).rejects.toThrow()
      await expect(c.find({ s: { $regex: '.*' } as never })).rejects.toThrow() // not in the filter type, on purpose
      await expect(c.find({}, { sort: [['a b', 1]] })).rejects.toThrow()
      await expect(c.update('a', { 'x..y': 1 })).rejects.toThrow()
      await expect(c.sum('$n', {})).rejects.toThrow()
      await expect(ctx.store().collection({ name: 'bad name"', indexes: [] })).rejects.toThrow()
    })
  })

  describe('page', () => {
    test('walks newest first across createdAt ties without losing or repeating an item', async () => {
      const c = await ctx.fresh([byNewest])
      const times = [ts(1, 9), ts(1, 10), ts(2, 8), ts(3, 7)]
      const docs: Item[] = []
      for (let i = 0; i < 23; i++) {
        const id = `i${String((i * 7) % 23).padStart(2, '0')}` // ids not in insertion order
        docs.push({ id, workspaceId: 'w1', createdAt: times[i % times.length], kind: i % 2 ? 'odd' : 'even' })
      }
      for (let i = 0; i < 5; i++) docs.push({ id: `o${i}`, workspaceId: 'w2', createdAt: times[i % 4] })
      for (const d of docs) await c.insert(d)
      const desc = (x: string, y: string) => (x < y ? 1 : x > y ? -1 : 0)
      const newestFirst = (a: Item, b: Item) => desc(String(a.createdAt), String(b.createdAt)) || desc(a.id, b.id)
      const expected = docs
        .filter((d) => d.workspaceId === 'w1')
        .sort(newestFirst)
        .map((d) => d.id)

      const seen: string[] = []
      let after: { createdAt: string; id: string } | null = null
      for (let guard = 0; guard < 10; guard++) {
        const page: Item[] = await c.page({ workspaceId: 'w1' }, 5, after)
        expect(page.length).toBeLessThanOrEqual(5)
        seen.push(...page.map((d) => d.id))
        if (page.length < 5) break
        const last: Item = page[page.length - 1]
        after = { createdAt: String(last.createdAt), id: last.id }
      }
      expect(seen).toEqual(expected)
      expect(new Set(seen).size).toBe(23)
      const last = seen[seen.length - 1]
      expect(await c.page({ workspaceId: 'w1' }, 5, { createdAt: String(docs.find((d) => d.id === last)!.createdAt), id: last })).toEqual([])
      expect((await c.page({ workspaceId: 'w1' }, 3)).map((d) => d.id)).toEqual(expected.slice(0, 3))
      expect((await c.page({ workspaceId: 'w1' }, 3, null)).map((d) => d.id)).toEqual(expected.slice(0, 3))
      const odd = docs
        .filter((d) => d.workspaceId === 'w1' && d.kind === 'odd')
        .sort(newestFirst)
        .map((d) => d.id)
      expect((await c.page({ workspaceId: 'w1', kind: 'odd' }, 50)).map((d) => d.id)).toEqual(odd)
      expect(await c.page({ workspaceId: 'w1' }, 0)).toEqual([])
    })
  })

  describe('count, sum and group', () => {
    let c: Collection<Item>
    beforeAll(async () => {
      c = await ctx.fresh()
      const rows: [string, string | null | undefined, boolean, number | string | undefined, number | undefined, string][] = [
        ['1', 'done', true, 10, 60, ts(1, 9, 5)],
        ['2', 'done', false, 2.5, 30, ts(1, 9, 59)],
        ['3', 'failed', true, undefined, 5, ts(1, 23)],
        ['4', null, false, 4, undefined, ts(2, 0)],
        ['5', undefined, true, '7', 1, ts(3, 9)],
      ]
      for (const [id, status, inbound, cost, seconds, createdAt] of rows) {
        const doc: Item = { id, workspaceId: id === '5' ? 'w2' : 'w1', inbound, createdAt }
        if (status !== undefined) doc.status = status
        if (cost !== undefined) doc.cost = cost
        if (seconds !== undefined) doc.usage = { seconds }
        await c.insert(doc)
      }
    })
    const sorted = (groups: Group[]) => [...groups].sort((a, b) => JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)))

    test('count', async () => {
      expect(await c.count({})).toBe(5)
      expect(await c.count({ workspaceId: 'w1', inbound: true })).toBe(2)
      expect(await c.count({ status: 'nothing' })).toBe(0)
    })

    test('sum treats missing (and non-numbers) as 0 and is 0 when nothing matches', async () => {
      expect(await c.sum('cost', {})).toBe(16.5)
      expect(await c.sum('usage.seconds', { workspaceId: 'w1' })).toBe(95)
      expect(await c.sum('cost', { status: 'failed' })).toBe(0)
      expect(await c.sum('cost', { workspaceId: 'nobody' })).toBe(0)
    })

    test('group by a field, null and missing together, with sums', async () => {
      expect(sorted(await c.group({}, { by: 'status', sum: ['cost', 'usage.seconds'] }))).toEqual(
        sorted([
          { key: 'done', count: 2, sums: { cost: 12.5, 'usage.seconds': 90 } },
          { key: 'failed', count: 1, sums: { cost: 0, 'usage.seconds': 5 } },
          { key: null, count: 2, sums: { cost: 4, 'usage.seconds': 1 } },
        ]),
      )
      expect(sorted(await c.group({ workspaceId: 'w1' }, { by: 'inbound' }))).toEqual(
        sorted([
          { key: false, count: 2, sums: {} },
          { key: true, count: 2, sums: {} },
        ]),
      )
      expect(await c.group({ workspaceId: 'nobody' }, { by: 'status' })).toEqual([])
    })

    test('group by UTC day and hour of an ISO timestamp', async () => {
      expect(sorted(await c.group({}, { by: { path: 'createdAt', unit: 'day' }, sum: ['usage.seconds'] }))).toEqual(
        sorted([
          { key: '2026-11-01', count: 3, sums: { 'usage.seconds': 95 } },
          { key: '2026-11-02', count: 1, sums: { 'usage.seconds': 0 } },
          { key: '2026-11-03', count: 1, sums: { 'usage.seconds': 1 } },
        ]),
      )
      expect(sorted(await c.group({ workspaceId: 'w1' }, { by: { path: 'createdAt', unit: 'hour' } }))).toEqual(
        sorted([
          { key: 0, count: 1, sums: {} },
          { key: 9, count: 2, sums: {} },
          { key: 23, count: 1, sums: {} },
        ]),
      )
    })
  })
}
