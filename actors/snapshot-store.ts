/**
 * Where actor snapshots live: one document per actor in the `actor_snapshots` collection of the
 * document store (SQLite embedded, MongoDB in production), keyed `kind:resourceId`.
 */
import type { Collection, DocumentStore, Filter } from '../src/store/port'
import type { StoredActor } from './types'

export const ACTOR_SNAPSHOTS = 'actor_snapshots'

/** The document id (and lease / queue key) of one actor. */
export const actorKey = (kind: string, id: string): string => `${kind}:${id}`

/** Splits `kind:resourceId` at the first colon (resource ids may contain colons, kinds may not). */
export function parseActorKey(key: string): { kind: string; id: string } | null {
  const at = key.indexOf(':')
  if (at <= 0 || at === key.length - 1) return null
  return { kind: key.slice(0, at), id: key.slice(at + 1) }
}

type ActorDoc = StoredActor & { id: string }

export class SnapshotStore {
  private constructor(private readonly docs: Collection<ActorDoc>) {}

  static async open(store: DocumentStore): Promise<SnapshotStore> {
    const docs = await store.collection<ActorDoc>({
      name: ACTOR_SNAPSHOTS,
      indexes: [
        // Boot: "which actors have work to resume in memory" (an effect in flight, or an outbox to
        // hand over) must not scan every actor.
        {
          name: 'pending',
          fields: [
            ['pendingWork', 1],
            ['kind', 1],
          ],
        },
        // Listing a kind, optionally in one state (console, campaign sweeps).
        {
          name: 'kind_state',
          fields: [
            ['kind', 1],
            ['state', 1],
            ['resourceId', 1],
          ],
        },
        // Operators: which actors wake next.
        { name: 'next_deadline', fields: [['nextDeadlineAt', 1]] },
      ],
    })
    return new SnapshotStore(docs)
  }

  get(key: string): Promise<StoredActor | null> {
    return this.docs.get(key)
  }

  put(doc: StoredActor): Promise<void> {
    return this.docs.upsert(doc as ActorDoc)
  }

  /** Actors whose last persisted snapshot had an effect running (see runtime.ts "pending work"). */
  pending(kind: string): Promise<StoredActor[]> {
    return this.docs.find({ pendingWork: true, kind })
  }

  /** Actors whose stored outbox still holds emitted events (a crash came between storing and handing over); they count as pending work. */
  withOutbox(kind: string): Promise<StoredActor[]> {
    return this.docs.find({ pendingWork: true, kind, hasOutbox: true })
  }

  /** One page, by id, of the actors that have deadlines (what their durable timers are rebuilt from). */
  withDeadlines(after: string | null, limit: number): Promise<StoredActor[]> {
    const filter: Filter = after === null ? { nextDeadlineAt: { $exists: true } } : { nextDeadlineAt: { $exists: true }, id: { $gt: after } }
    return this.docs.find(filter, { sort: [['id', 1]], limit })
  }

  list(kind: string, opts: { state?: string; limit?: number } = {}): Promise<StoredActor[]> {
    const filter: Filter = opts.state === undefined ? { kind } : { kind, state: opts.state }
    return this.docs.find(filter, { sort: [['resourceId', 1]], limit: opts.limit })
  }

  count(kind: string): Promise<number> {
    return this.docs.count({ kind })
  }

  countInState(kind: string, state: string): Promise<number> {
    return this.docs.count({ kind, state })
  }
}
