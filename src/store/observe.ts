/**
 * Wraps a collection so every write by id is reported after it succeeds (caches built on the
 * collection invalidate from one place instead of every caller remembering to). A write without
 * an id (`deleteMany`) reports `*`.
 */
import type { Collection, Doc } from './port'

export function observeWrites<T extends Doc>(inner: Collection<T>, onWrite: (id: string) => void): Collection<T> {
  const after = async <R>(id: string, run: Promise<R>): Promise<R> => {
    const result = await run
    onWrite(id)
    return result
  }
  return {
    name: inner.name,
    pipelined: inner.pipelined,
    insert: (doc) => after(doc.id, inner.insert(doc)),
    get: (id) => inner.get(id),
    view: (id, view) => inner.view(id, view),
    findOne: (filter) => inner.findOne(filter),
    find: (filter, options) => inner.find(filter, options),
    page: (filter, limit, afterPos) => inner.page(filter, limit, afterPos),
    replace: (doc) => after(doc.id, inner.replace(doc)),
    update: (id, set, unset) => after(id, inner.update(id, set, unset)),
    upsert: (doc) => after(doc.id, inner.upsert(doc)),
    delete: (id) => after(id, inner.delete(id)),
    deleteMany: (filter) => after('*', inner.deleteMany(filter)),
    count: (filter) => inner.count(filter),
    sum: (path, filter) => inner.sum(path, filter),
    group: (filter, options) => inner.group(filter, options),
  }
}
