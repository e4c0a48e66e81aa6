/**
 * Cursor pagination (docs/spec.md Conventions rule 4): newest first, `{ items, nextCursor }`.
 * A cursor is opaque to callers: base64url of the last item's (createdAt, id), which the store
 * turns into a keyset query, so pages stay fast and stable while documents are added.
 */
import { t } from 'elysia'
import { invalid } from '../refusals'
import type { PageAfter } from '../store/port'

const STORED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const ID = /^[A-Za-z0-9_:.-]{1,200}$/

export const encodeCursor = (after: PageAfter): string => Buffer.from(JSON.stringify([after.createdAt, after.id])).toString('base64url')

export function decodeCursor(cursor: string | undefined): PageAfter | null {
  if (cursor === undefined || cursor === '') return null
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    // Only what this API hands out: a stored timestamp (ISO, UTC, milliseconds) and an id.
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && STORED_INSTANT.test(value[0]) && typeof value[1] === 'string' && ID.test(value[1])) {
      return { createdAt: value[0], id: value[1] }
    }
  } catch {
    /* reported below */
  }
  throw invalid('cursor', 'is not a cursor returned by this list')
}

/** `limit` and `cursor` query members; bounds per list come from docs/spec.md Limits. */
export const pageQuery = (max: number, fallback: number) => ({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: max, default: fallback, description: `page size, 1–${max} (default ${fallback})` })),
  cursor: t.Optional(t.String({ description: 'nextCursor from the previous page' })),
})

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/**
 * One page of a keyset query, asking for one extra row, so `next` is null exactly when nothing
 * follows (no empty last page). The one place that knows how: `paginate` (v1 lists) and services
 * that walk their own pages use it.
 */
export async function pageOf<D extends { createdAt: string; id: string }>(
  fetch: (limit: number, after: PageAfter | null) => Promise<D[]>,
  limit: number,
  after: PageAfter | null,
): Promise<{ items: D[]; next: PageAfter | null }> {
  const rows = await fetch(limit + 1, after)
  const more = rows.length > limit
  const items = more ? rows.slice(0, limit) : rows
  const last = items[items.length - 1]
  return { items, next: more && last ? { createdAt: last.createdAt, id: last.id } : null }
}

/** A v1 list answer from `limit` and `cursor`: `{ items, nextCursor }` (docs/spec.md Conventions rule 4). */
export async function paginate<D extends { createdAt: string; id: string }, T>(
  fetch: (limit: number, after: PageAfter | null) => Promise<D[]>,
  query: { limit?: number; cursor?: string },
  fallback: number,
  present: (doc: D) => T | Promise<T>,
): Promise<Page<T>> {
  const page = await pageOf(fetch, query.limit ?? fallback, decodeCursor(query.cursor))
  return { items: await Promise.all(page.items.map(present)), nextCursor: page.next ? encodeCursor(page.next) : null }
}

export const pageSchema = <T extends Parameters<typeof t.Array>[0]>(item: T) => t.Object({ items: t.Array(item), nextCursor: t.Union([t.String(), t.Null()]) })
