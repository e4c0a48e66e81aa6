/**
 * Compiles port filters to parameterised SQL over `(id TEXT PRIMARY KEY, doc TEXT, <key columns>)`
 * tables.
 *
 * A field that one of the collection's indexes uses reads as its key column (`keyColumn`, kept equal
 * to `json_extract(doc,'$.path')` by the adapter on every write), so the planner uses the index on
 * it; any other field reads as `json_extract(doc,'$.path')`. Paths are validated identifiers (safe
 * inside the literal and the column name); values are always bound. json_extract turns true/false
 * into 1/0 and JSON null/missing into SQL NULL (the key columns hold the same), so comparisons on
 * numbers and booleans also check `json_type` to keep MongoDB's meaning (true ≠ 1, a number range
 * never matches strings).
 */

import { asCondition, assertPath } from './paths'
import type { Condition, Filter, GroupOptions, PageAfter, Scalar } from './port'

export type Params = (string | number | null)[]

interface Field {
  /** SQL for the value (NULL when null or missing). */
  value: string
  /** SQL for its JSON type: 'null', 'true', 'false', 'integer', 'real', 'text', 'object', 'array'. */
  type: string
}

/** The paths a collection keeps in key columns (its indexes' fields); none: every field reads from the document. */
export type KeyPaths = ReadonlySet<string>
const NO_KEYS: KeyPaths = new Set()

/** The column holding `path`'s value for indexes: `"k$a$b"` for `a.b` (paths are identifiers, so `$` cannot clash). */
export const keyColumn = (path: string): string => `"k$${assertPath(path).replaceAll('.', '$')}"`

export function field(path: string, keys: KeyPaths = NO_KEYS): Field {
  assertPath(path)
  // `id` is the primary-key column, so lookups and sorts on it use the table's own b-tree.
  if (path === 'id') return { value: 'id', type: `'text'` }
  const type = `json_type(doc,'$.${path}')`
  return { value: keys.has(path) ? keyColumn(path) : `json_extract(doc,'$.${path}')`, type }
}

const NUMERIC = `IN ('integer','real')`

function eq(f: Field, v: Scalar, params: Params): string {
  if (v === null) return `${f.value} IS NULL`
  if (typeof v === 'boolean') {
    params.push(v ? 1 : 0)
    return `(${f.value} = ? AND ${f.type} = '${v}')`
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`invalid number in filter: ${v}`)
    params.push(v)
    return `(${f.value} = ? AND ${f.type} ${NUMERIC})`
  }
  if (typeof v === 'string') {
    params.push(v)
    return `${f.value} = ?`
  }
  throw new Error(`invalid filter value: ${JSON.stringify(v)}`)
}

function oneOf(f: Field, values: Scalar[] | undefined, params: Params): string {
  if (!Array.isArray(values)) throw new Error('$in/$nin takes an array')
  if (values.length === 0) return '0'
  if (values.every((v): v is string => typeof v === 'string')) {
    params.push(...values)
    return `${f.value} IN (${values.map(() => '?').join(',')})`
  }
  return `(${values.map((v) => eq(f, v, params)).join(' OR ')})`
}

/** Negation that treats NULL (unknown) as "not matched", so missing fields satisfy $ne/$nin. */
const not = (sql: string) => `(${sql}) IS NOT 1`

const RANGE = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const

function range(f: Field, op: keyof typeof RANGE, v: unknown, params: Params): string {
  if (typeof v === 'string') {
    params.push(v)
    return `(${f.value} ${RANGE[op]} ? AND ${f.type} = 'text')`
  }
  if (typeof v === 'number' && Number.isFinite(v)) {
    params.push(v)
    return `(${f.value} ${RANGE[op]} ? AND ${f.type} ${NUMERIC})`
  }
  throw new Error(`${op} takes a string or a number`)
}

function condition(f: Field, c: Condition, params: Params): string[] {
  const terms: string[] = []
  for (const op of Object.keys(c) as (keyof Condition)[]) {
    const arg = c[op]
    if (arg === undefined) continue
    switch (op) {
      case '$eq':
        terms.push(eq(f, arg as Scalar, params))
        break
      case '$ne':
        terms.push(arg === null ? `${f.value} IS NOT NULL` : not(eq(f, arg as Scalar, params)))
        break
      case '$in':
        terms.push(oneOf(f, arg as Scalar[], params))
        break
      case '$nin':
        terms.push(not(oneOf(f, arg as Scalar[], params)))
        break
      case '$exists':
        terms.push(arg ? `${f.value} IS NOT NULL` : `${f.value} IS NULL`)
        break
      default:
        terms.push(range(f, op, arg, params))
    }
  }
  return terms
}

/** The WHERE body for a filter ('1' when empty); pushes bound values onto `params` in order. */
export function compileFilter(filter: Filter, params: Params, keys: KeyPaths = NO_KEYS): string {
  const terms: string[] = []
  for (const [path, value] of Object.entries(filter)) {
    const f = field(path, keys)
    const c = asCondition(value)
    if (c) terms.push(...condition(f, c, params))
    else terms.push(eq(f, value as Scalar, params))
  }
  return terms.length ? terms.join(' AND ') : '1'
}

/**
 * Newest-first keyset position. The leading `createdAt <= ?` is implied by the OR but is what lets
 * the planner seek into the (…, createdAt desc, id desc) index instead of walking past newer rows.
 */
export function compileAfter(after: PageAfter, params: Params, keys: KeyPaths = NO_KEYS): string {
  const created = field('createdAt', keys).value
  params.push(after.createdAt, after.createdAt, after.createdAt, after.id)
  return `${created} <= ? AND (${created} < ? OR (${created} = ? AND id < ?))`
}

/** Newest first (page()). */
export const pageOrder = (keys: KeyPaths = NO_KEYS): string => `ORDER BY ${field('createdAt', keys).value} DESC, id DESC`

export function compileSort(sort: [string, 1 | -1][] | undefined, keys: KeyPaths = NO_KEYS): string {
  if (!sort?.length) return ''
  return `ORDER BY ${sort.map(([p, d]) => `${field(p, keys).value} ${d === -1 ? 'DESC' : 'ASC'}`).join(', ')}`
}

/** Index key for a field: its key column (`id` stays the primary key), so queries' `field()` matches it. */
export function indexKey(path: string, direction: 1 | -1): string {
  return `${path === 'id' ? 'id' : keyColumn(path)}${direction === -1 ? ' DESC' : ''}`
}

/** SELECT list for group(): key `k`, boolean flag `b` (json_extract gives 1/0 for true/false). */
export function compileGroupKey(by: GroupOptions['by'], keys: KeyPaths = NO_KEYS): { key: string; bool: string } {
  if (typeof by === 'string') {
    const f = field(by, keys)
    return { key: f.value, bool: `iif(${f.type} IN ('true','false'), 1, 0)` }
  }
  const f = field(by.path, keys)
  // ISO 8601 UTC strings: characters 1–10 are the day, 12–13 the hour.
  if (by.unit === 'day') return { key: `substr(${f.value},1,10)`, bool: '0' }
  if (by.unit === 'hour') return { key: `CAST(substr(${f.value},12,2) AS INTEGER)`, bool: '0' }
  throw new Error(`invalid group unit: ${String(by.unit)}`)
}

/** Sum of a numeric field; missing, null and non-numbers count as 0 (total() never overflows). */
export function sumOf(path: string, keys: KeyPaths = NO_KEYS): string {
  const f = field(path, keys)
  return `total(CASE WHEN ${f.type} ${NUMERIC} THEN ${f.value} END)`
}
