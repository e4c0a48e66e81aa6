/**
 * Key columns of the embedded store: every field a collection's indexes use is kept in a column of
 * its own beside the JSON document, and the indexes are built on those columns.
 *
 * Why: an index on `json_extract(doc,'$.path')` makes SQLite parse the document once per key on
 * every write, for the old row and the new one. A call row has five indexes over ten fields, so an
 * update that changed no key still parsed it ~20 times: 13 µs against 3 µs for the same update with
 * key columns, and inserts 10 µs against 8 (measured here: 20,000 call rows in memory, bun:sqlite
 * 3.54). bench:calls' profile had the UPDATE statement of update() alone at 13% of the event loop.
 * With key columns, an update whose keys did not change writes the document only.
 *
 * A column holds exactly what `json_extract(doc,'$.path')` returns for the stored JSON (1/0 for
 * true/false, NULL for null or missing, the JSON text of an object or array), so filters compare
 * it with the same meaning (sqlite-filter.ts), and a file from before key columns is brought over
 * by filling them with json_extract itself.
 */
import type { Database } from 'bun:sqlite'
import type { CollectionSpec, IndexSpec } from './port'
import { field, indexKey, type KeyPaths, keyColumn } from './sqlite-filter'

export type KeyValue = string | number | null

/** The paths a collection's indexes use, in a fixed order (`id` is the primary key, not a key column). */
export function keyPathsOf(spec: CollectionSpec): string[] {
  const paths = new Set<string>()
  for (const index of spec.indexes) for (const [path] of index.fields) if (path !== 'id') paths.add(path)
  return [...paths]
}

/** What JSON.stringify makes of a value, as json_extract would return it from the stored text. */
function asKey(value: unknown): KeyValue {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') value = (value as { toJSON(): unknown }).toJSON()
  if (value === null || value === undefined) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'object') return JSON.stringify(value)
  return null // functions and symbols: JSON leaves them out
}

/** A path split once into its steps (`a.b` → ['a', 'b']): keyValues runs on every write. */
export type KeyPath = readonly string[]
export const splitPaths = (paths: readonly string[]): KeyPath[] => paths.map((p) => p.split('.'))

/** `json_extract(doc,'$.a.b')` computed on the document object: steps only into plain objects, as a JSON path does. */
export function keyValue(doc: Record<string, unknown>, path: string | KeyPath): KeyValue {
  let at: unknown = doc
  for (const key of typeof path === 'string' ? path.split('.') : path) {
    if (at !== null && typeof at === 'object' && typeof (at as { toJSON?: unknown }).toJSON === 'function') at = (at as { toJSON(): unknown }).toJSON()
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return null
    at = (at as Record<string, unknown>)[key]
  }
  return asKey(at)
}

export function keyValues(doc: Record<string, unknown>, paths: readonly KeyPath[]): KeyValue[] {
  const values = new Array<KeyValue>(paths.length)
  for (let i = 0; i < paths.length; i++) values[i] = keyValue(doc, paths[i]!)
  return values
}

function indexSql(table: string, indexPrefix: string, index: IndexSpec, keys: KeyPaths): string {
  const name = `"${indexPrefix}${index.name}"`
  const columns = index.fields.map(([path, dir]) => indexKey(path, dir)).join(', ')
  // Sparse unique: rows with any key null or missing stay out of the index, so they never clash.
  const where = index.unique && index.sparse ? ` WHERE ${index.fields.map(([path]) => `${field(path, keys).value} IS NOT NULL`).join(' AND ')}` : ''
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${table} (${columns})${where}`
}

/**
 * Creates the table, its key columns and its indexes, in one transaction. A key column added to a
 * table that has rows is filled from the documents by json_extract; an index whose definition
 * changed since an earlier version (other fields, unique, or on `json_extract(...)` as before key
 * columns) is rebuilt under the same name. The
 * transaction takes the write lock first (IMMEDIATE): two processes sharing the file
 * (SQLITE_LOCKING=shared) opening it at once must not both see a column missing and both add it.
 */
export function ensureTable(db: Database, table: string, indexPrefix: string, spec: CollectionSpec, paths: readonly string[]): void {
  const keys: KeyPaths = new Set(paths)
  db.transaction(() => {
    db.run(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL)`)
    const present = new Set(
      db
        .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table.slice(1, -1)}')`)
        .all()
        .map((c) => `"${c.name}"`),
    )
    for (const path of paths) {
      const column = keyColumn(path)
      if (present.has(column)) continue
      db.run(`ALTER TABLE ${table} ADD COLUMN ${column}`)
      db.run(`UPDATE ${table} SET ${column} = json_extract(doc,'$.${path}')`)
    }
    for (const index of spec.indexes) {
      const name = `${indexPrefix}${index.name}`
      const sql = indexSql(table, indexPrefix, index, keys)
      const existing = db.query<{ sql: string | null }, [string]>(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name)
      // SQLite keeps the statement as written, less its IF NOT EXISTS.
      if (existing?.sql && existing.sql !== sql.replace(' IF NOT EXISTS', '')) db.run(`DROP INDEX "${name}"`)
      db.run(sql)
    }
  }).immediate()
}

/**
 * The unique index a UNIQUE failure on key columns names, from SQLite's message
 * ("UNIQUE constraint failed: t.k$a, t.k$b"): the unique index on exactly those columns.
 */
export function uniqueIndexOf(message: string, table: string, spec: CollectionSpec): string | null {
  const failed = /UNIQUE constraint failed: (.+)$/.exec(message)?.[1]
  if (!failed) return null
  const prefix = `${table.slice(1, -1)}.`
  const columns = failed.split(', ').map((c) => (c.startsWith(prefix) ? c.slice(prefix.length) : c))
  const wanted = columns.map((c) => (c === 'id' ? 'id' : `"${c}"`)).join(',')
  const index = spec.indexes.find((i) => i.unique && i.fields.map(([p]) => (p === 'id' ? 'id' : keyColumn(p))).join(',') === wanted)
  return index?.name ?? null
}
