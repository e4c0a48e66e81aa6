/**
 * Workspace scoping at the store seam. A collection whose documents each belong to one workspace
 * is held as a `WorkspaceCollection`: a service reaches its documents through `in(workspaceId)`, a
 * view that ANDs the workspace into every filter, answers `get`/`update`/`delete` of another
 * workspace's document as if there were none, and stamps the workspace on insert. Reading across
 * workspaces (an actor loading by id, a sweep) goes through `acrossWorkspaces`, named so that it is
 * a choice a reader sees rather than a filter someone forgot.
 */
import type { Collection, CollectionSpec, Doc, Filter, FindOptions, Group, GroupOptions, IndexSpec, PageAfter } from './port'

export type WorkspaceDoc = Doc & { workspaceId: string }

/** A filter inside one workspace: the view adds the workspace, so naming it is refused. */
export type ScopedFilter = Filter & { workspaceId?: never }

/** A document to insert: its workspace is the view's (stamped); naming another is refused. */
export type ScopedInsert<T extends WorkspaceDoc> = Omit<T, 'workspaceId'> & { workspaceId?: string }

/** A collection's operations within one workspace. */
export interface ScopedCollection<T extends WorkspaceDoc> {
  readonly workspaceId: string
  /** Inserts with the view's workspace stamped; the stored document. */
  insert(doc: ScopedInsert<T>): Promise<T>
  /** Null when there is no such document in this workspace (in another one counts as none). */
  get(id: string): Promise<T | null>
  findOne(filter?: ScopedFilter): Promise<T | null>
  find(filter?: ScopedFilter, options?: FindOptions): Promise<T[]>
  page(filter: ScopedFilter, limit: number, after?: PageAfter | null): Promise<T[]>
  /** As Collection.update, but null for a document of another workspace (left untouched). */
  update(id: string, set: Record<string, unknown>, unset?: string[]): Promise<T | null>
  /** As Collection.replace, but false for a document of another workspace (left as it is). */
  replace(doc: ScopedInsert<T>): Promise<boolean>
  /** As Collection.delete, but false for a document of another workspace (left in place). */
  delete(id: string): Promise<boolean>
  deleteMany(filter?: ScopedFilter): Promise<number>
  count(filter?: ScopedFilter): Promise<number>
  sum(path: string, filter?: ScopedFilter): Promise<number>
  group(filter: ScopedFilter, options: GroupOptions): Promise<Group[]>
}

/** A programming error: scoped code tried to name or move a document's workspace. */
export class WorkspaceOverrideError extends Error {
  constructor(collection: string, what: string) {
    super(`${collection}: ${what} names workspaceId; a workspace-scoped view sets it itself`)
    this.name = 'WorkspaceOverrideError'
  }
}

export class WorkspaceCollection<T extends WorkspaceDoc> {
  constructor(readonly acrossWorkspaces: Collection<T>) {}

  get name(): string {
    return this.acrossWorkspaces.name
  }

  in(workspaceId: string): ScopedCollection<T> {
    if (!workspaceId) throw new Error(`${this.name}: a scoped view needs a workspace id`)
    return new Scoped(this.acrossWorkspaces, workspaceId)
  }
}

class Scoped<T extends WorkspaceDoc> implements ScopedCollection<T> {
  constructor(
    private readonly all: Collection<T>,
    readonly workspaceId: string,
  ) {}

  private where(filter: ScopedFilter | undefined, what: string): Filter {
    if (filter && 'workspaceId' in filter) throw new WorkspaceOverrideError(this.all.name, what)
    return { ...filter, workspaceId: this.workspaceId }
  }

  private mine(doc: T | null): T | null {
    return doc !== null && doc.workspaceId === this.workspaceId ? doc : null
  }

  insert(doc: ScopedInsert<T>): Promise<T> {
    if (doc.workspaceId !== undefined && doc.workspaceId !== this.workspaceId) return Promise.reject(new WorkspaceOverrideError(this.all.name, 'an inserted document'))
    return this.all.insert({ ...doc, workspaceId: this.workspaceId } as T)
  }

  async get(id: string): Promise<T | null> {
    return this.mine(await this.all.get(id))
  }

  async findOne(filter?: ScopedFilter): Promise<T | null> {
    return this.all.findOne(this.where(filter, 'a filter'))
  }

  async find(filter?: ScopedFilter, options?: FindOptions): Promise<T[]> {
    return this.all.find(this.where(filter, 'a filter'), options)
  }

  async page(filter: ScopedFilter, limit: number, after?: PageAfter | null): Promise<T[]> {
    return this.all.page(this.where(filter, 'a filter'), limit, after)
  }

  // A document's workspace never changes (views refuse to set it), so a read that finds it in this
  // workspace still holds when the write lands. The write is issued after that read, not as the
  // call is made: a caller that relies on a pipelined store's issue order awaits it first.
  async update(id: string, set: Record<string, unknown>, unset: string[] = []): Promise<T | null> {
    if ('workspaceId' in set || unset.includes('workspaceId')) throw new WorkspaceOverrideError(this.all.name, 'an update')
    if (!(await this.get(id))) return null
    return this.all.update(id, set, unset)
  }

  async replace(doc: ScopedInsert<T>): Promise<boolean> {
    if (doc.workspaceId !== undefined && doc.workspaceId !== this.workspaceId) throw new WorkspaceOverrideError(this.all.name, 'a replacing document')
    const stamped = { ...doc, workspaceId: this.workspaceId } as T
    if (!(await this.get(stamped.id))) return false
    return this.all.replace(stamped)
  }

  async delete(id: string): Promise<boolean> {
    if (!(await this.get(id))) return false
    return this.all.delete(id)
  }

  async deleteMany(filter?: ScopedFilter): Promise<number> {
    return this.all.deleteMany(this.where(filter, 'a filter'))
  }

  async count(filter?: ScopedFilter): Promise<number> {
    return this.all.count(this.where(filter, 'a filter'))
  }

  async sum(path: string, filter?: ScopedFilter): Promise<number> {
    return this.all.sum(path, this.where(filter, 'a filter'))
  }

  async group(filter: ScopedFilter, options: GroupOptions): Promise<Group[]> {
    return this.all.group(this.where(filter, 'a filter'), options)
  }
}

/** Newest-first listing within a workspace (Collection.page's order), which every scoped collection needs. */
export const workspaceCreatedIndex: IndexSpec = {
  name: 'workspace_created',
  fields: [
    ['workspaceId', 1],
    ['createdAt', -1],
    ['id', -1],
  ],
}

/** The spec of a workspace-scoped collection: its own indexes plus `workspace_created`. */
export function workspaceSpec(name: string, indexes: IndexSpec[] = []): CollectionSpec {
  return { name, indexes: [workspaceCreatedIndex, ...indexes] }
}
