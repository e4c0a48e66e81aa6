/**
 * Rules both adapters share. Names and field paths end up inside SQL text (SQLite) or as
 * query keys (MongoDB, where a leading `$` would become an operator), so only plain identifiers
 * are accepted.
 */
import type { Condition, Scalar } from './port'

const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

export function assertPath(path: string): string {
  if (typeof path !== 'string' || !PATH.test(path)) throw new Error(`invalid field path: ${JSON.stringify(path)}`)
  return path
}

export function assertName(kind: 'collection' | 'index', name: string): string {
  if (typeof name !== 'string' || !NAME.test(name)) throw new Error(`invalid ${kind} name: ${JSON.stringify(name)}`)
  return name
}

const OPERATORS = new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'])

/** A filter value is a Condition when it is a non-null object; unknown operators are refused. */
export function asCondition(value: Scalar | Condition): Condition | null {
  if (value === null || typeof value !== 'object') return null
  for (const op of Object.keys(value)) if (!OPERATORS.has(op)) throw new Error(`unsupported filter operator: ${op}`)
  return value
}

/** Page sizes and limits: a non-negative integer, so a bad value fails loudly instead of meaning "all". */
export function assertLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`invalid limit: ${limit}`)
  return limit
}

/** Removes undefined values, which JSON drops and the Mongo driver is told to ignore. */
export function definedEntries(set: Record<string, unknown>): [string, unknown][] {
  return Object.entries(set).filter(([, v]) => v !== undefined)
}

/** One order for group keys in both adapters (MongoDB's type order): null, numbers, strings, booleans. */
export function compareKeys(a: Scalar, b: Scalar): number {
  const rank = (v: Scalar) => (v === null ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3)
  const r = rank(a) - rank(b)
  if (r !== 0) return r
  if (a === null || b === null) return 0
  return a < b ? -1 : a > b ? 1 : 0
}
