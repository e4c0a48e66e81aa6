/**
 * The MongoDB query translation, checked without a server (the contract suite needs MONGODB_URL):
 * these are the shapes whose meaning the contract pins down on a real MongoDB.
 */
import { describe, expect, test } from 'bun:test'
import { afterClauses, groupKey, toIndexDescription, toMongoFilter, toMongoSort } from '../../src/store/mongo-filter'

describe('mongo filter translation', () => {
  test('equality, null and id map directly; an empty filter is {}', () => {
    expect(toMongoFilter({})).toEqual({})
    expect(toMongoFilter({ id: 'a' })).toEqual({ _id: 'a' })
    expect(toMongoFilter({ tag: null })).toEqual({ tag: null })
    expect(toMongoFilter({ 'voice.answersCalls': true })).toEqual({ 'voice.answersCalls': true })
  })

  test('several clauses join with $and, so two operators on one path never overwrite each other', () => {
    expect(toMongoFilter({ workspaceId: 'w', n: { $gte: 1, $lt: 10 }, tag: { $ne: 'x', $exists: true } })).toEqual({
      $and: [{ workspaceId: 'w' }, { n: { $gte: 1 } }, { n: { $lt: 10 } }, { tag: { $ne: 'x' } }, { tag: { $ne: null } }],
    })
  })

  test('$exists means present and not null; $in/$nin pass lists through', () => {
    expect(toMongoFilter({ a: { $exists: false } })).toEqual({ a: { $eq: null } })
    expect(toMongoFilter({ a: { $in: ['x', null] } })).toEqual({ a: { $in: ['x', null] } })
    expect(toMongoFilter({ id: { $nin: [] } })).toEqual({ _id: { $nin: [] } })
  })

  test('operators, paths and values outside the port are refused', () => {
    expect(() => toMongoFilter({ $where: 'x' })).toThrow()
    // Filters the filter type refuses, on purpose: the translation must refuse them too.
    const outside = [{ a: { $regex: 'x' } }, { a: { $gt: true } }, { a: { $in: 'x' } }, { a: [1] }] as never[]
    for (const filter of outside) expect(() => toMongoFilter(filter)).toThrow()
  })

  test('keyset position, sort and group keys', () => {
    expect(toMongoFilter({ workspaceId: 'w' }, ...afterClauses({ createdAt: 't', id: 'i' }))).toEqual({
      $and: [{ workspaceId: 'w' }, { createdAt: { $lte: 't' } }, { $or: [{ createdAt: { $lt: 't' } }, { createdAt: 't', _id: { $lt: 'i' } }] }],
    })
    expect(
      toMongoSort([
        ['grp', 1],
        ['id', -1],
      ]),
    ).toEqual({ grp: 1, _id: -1 })
    expect(groupKey('usage.kind')).toBe('$usage.kind')
    expect(groupKey({ path: 'createdAt', unit: 'hour' })).toEqual({
      $cond: [{ $eq: [{ $type: '$createdAt' }, 'string'] }, { $toInt: { $substrBytes: ['$createdAt', 11, 2] } }, null],
    })
  })

  test('a sparse unique index keeps null and missing values out through a partial filter', () => {
    const d = toIndexDescription({
      name: 'ws_ext',
      fields: [
        ['workspaceId', 1],
        ['externalId', 1],
      ],
      unique: true,
      sparse: true,
    })
    expect(d.name).toBe('ws_ext')
    expect(d.key).toEqual({ workspaceId: 1, externalId: 1 })
    expect(d.unique).toBe(true)
    expect(d.sparse).toBeUndefined()
    const partial = d.partialFilterExpression as Record<string, { $type: string[] }>
    expect(Object.keys(partial)).toEqual(['workspaceId', 'externalId'])
    expect(partial.externalId.$type).not.toContain('null')
    expect(partial.externalId.$type).toContain('string')
    expect(
      toIndexDescription({
        name: 'page',
        fields: [
          ['workspaceId', 1],
          ['createdAt', -1],
          ['id', -1],
        ],
      }),
    ).toEqual({
      name: 'page',
      key: { workspaceId: 1, createdAt: -1, _id: -1 },
    })
  })
})
