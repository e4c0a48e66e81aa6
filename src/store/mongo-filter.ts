/**
 * Translates port filters, sorts and group keys to MongoDB queries. The port's meaning is MongoDB's
 * except `$exists`, which the port defines as "present and not null" (so it maps onto `$ne: null`).
 */
import type { Document, IndexDescription } from 'mongodb'
import { asCondition, assertName, assertPath } from './paths'
import type { Filter, GroupOptions, IndexSpec, PageAfter, Scalar } from './port'

/** The document id lives in `_id`; every other path is used as is. */
export function mongoPath(path: string): string {
  return assertPath(path) === 'id' ? '_id' : path
}

function scalar(v: unknown): Scalar {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number' && Number.isFinite(v)) return v
  throw new Error(`invalid filter value: ${JSON.stringify(v)}`)
}

function list(v: unknown): Scalar[] {
  if (!Array.isArray(v)) throw new Error('$in/$nin takes an array')
  return v.map(scalar)
}

function bound(op: string, v: unknown): string | number {
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v
  throw new Error(`${op} takes a string or a number`)
}

/** One clause per operator, joined with $and, so two operators on one path never collide. */
export function toMongoClauses(filter: Filter): Document[] {
  const clauses: Document[] = []
  for (const [path, value] of Object.entries(filter)) {
    const key = mongoPath(path)
    const c = asCondition(value)
    if (!c) {
      clauses.push({ [key]: scalar(value) })
      continue
    }
    for (const [op, arg] of Object.entries(c)) {
      if (arg === undefined) continue
      if (op === '$exists') clauses.push({ [key]: arg ? { $ne: null } : { $eq: null } })
      else if (op === '$in' || op === '$nin') clauses.push({ [key]: { [op]: list(arg) } })
      else if (op === '$eq' || op === '$ne') clauses.push({ [key]: { [op]: scalar(arg) } })
      else clauses.push({ [key]: { [op]: bound(op, arg) } })
    }
  }
  return clauses
}

export function toMongoFilter(filter: Filter, ...extra: Document[]): Document {
  const clauses = [...toMongoClauses(filter), ...extra]
  return clauses.length === 0 ? {} : clauses.length === 1 ? clauses[0] : { $and: clauses }
}

/**
 * Documents strictly older than `after` in (createdAt desc, id desc) order. The `$lte` is implied
 * by the `$or` but gives the planner a range bound on the createdAt key of the index.
 */
export function afterClauses(after: PageAfter): Document[] {
  return [{ createdAt: { $lte: after.createdAt } }, { $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: after.id } }] }]
}

export const PAGE_SORT = { createdAt: -1, _id: -1 } as const

export function toMongoSort(sort: [string, 1 | -1][]): Record<string, 1 | -1> {
  return Object.fromEntries(sort.map(([p, d]) => [mongoPath(p), d === -1 ? -1 : 1]))
}

/** `$group` key expression; day/hour cut the ISO string, and a non-string gives a null key. */
export function groupKey(by: GroupOptions['by']): unknown {
  if (typeof by === 'string') return `$${mongoPath(by)}`
  const p = `$${mongoPath(by.path)}`
  let part: Document
  if (by.unit === 'day') part = { $substrBytes: [p, 0, 10] }
  else if (by.unit === 'hour') part = { $toInt: { $substrBytes: [p, 11, 2] } }
  else throw new Error(`invalid group unit: ${String(by.unit)}`)
  return { $cond: [{ $eq: [{ $type: p }, 'string'] }, part, null] }
}

/** Every BSON type but null (and undefined/minKey/maxKey): the "present and not null" of sparse indexes. */
export const NOT_NULL_TYPES = ['double', 'string', 'object', 'array', 'binData', 'objectId', 'bool', 'date', 'int', 'timestamp', 'long', 'decimal']

export function toIndexDescription(index: IndexSpec): IndexDescription {
  const key = Object.fromEntries(index.fields.map(([p, d]) => [mongoPath(p), d === -1 ? -1 : 1] as const))
  const description: IndexDescription = { name: assertName('index', index.name), key }
  if (index.unique) description.unique = true
  if (index.unique && index.sparse) {
    // Not `sparse: true`: that only skips missing fields, while the port also skips nulls.
    // partialFilterExpression cannot say `$ne: null`, so it lists the non-null types instead.
    description.partialFilterExpression = Object.fromEntries(
      Object.keys(key)
        .filter((k) => k !== '_id')
        .map((k) => [k, { $type: NOT_NULL_TYPES }]),
    )
  }
  return description
}
