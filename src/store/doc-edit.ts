/**
 * Editing a parsed document the way the port's update() means it (MongoDB's $set / $unset on dotted
 * paths): the embedded store applies these in JS inside the write transaction (sqlite-collection.ts update()).
 */

/** What the value reads back as once stored as JSON (a Date becomes its string, NaN null). */
export function asJsonValue(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  return JSON.parse(JSON.stringify(value))
}

/**
 * Sets `a.b.c`, creating missing objects on the way; like SQLite's json_set, a step into a value
 * that is not an object (a string, an array) changes nothing.
 */
export function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let at: Record<string, unknown> = doc
  for (const key of keys.slice(0, -1)) {
    const next = at[key]
    if (next === undefined) at = at[key] = {}
    else if (next !== null && typeof next === 'object' && !Array.isArray(next)) at = next as Record<string, unknown>
    else return
  }
  at[keys[keys.length - 1]!] = value
}

export function removePath(doc: Record<string, unknown>, path: string): void {
  const keys = path.split('.')
  let at: unknown = doc
  for (const key of keys.slice(0, -1)) {
    at = at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined
    if (at === undefined) return
  }
  if (at !== null && typeof at === 'object' && !Array.isArray(at)) delete (at as Record<string, unknown>)[keys[keys.length - 1]!]
}
