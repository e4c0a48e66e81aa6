/**
 * Reading actors without sending them anything: the stored record (with whether its chart version
 * is still the current one), a kind's stored records, and the waits for an effect's outcome
 * (settle.ts). They read the store, so they work whichever instance holds the actor.
 */
import type { Clock } from '../src/clock'
import type { Residency } from './residency'
import type { SerialQueue } from './serial-queue'
import { reached, type SettleTarget, settled } from './settle'
import { actorKey, type SnapshotStore } from './snapshot-store'
import type { ActorRecord, Registration, SettledWhen, SnapshotView, StoredActor } from './types'

/** What a part of the runtime that reads actors is given of it (reads here, introspection.ts). */
export interface RuntimeAccess {
  registration: (kind: string) => Registration
  /** The runtime's residency; throws while the runtime is stopped. */
  residency: () => Residency
  /** The same, null while the runtime is stopped. */
  held: () => Residency | null
  /** The snapshot store; throws while the runtime is stopped. */
  store: () => SnapshotStore
}

export interface ReadParts extends RuntimeAccess {
  queue: SerialQueue
  /** Times the waits for an outcome (host-paced: a store write takes host time). */
  clock?: Pick<Clock, 'after'>
}

export class ActorReads {
  constructor(private readonly r: ReadParts) {}

  async read(kind: string, id: string): Promise<ActorRecord | null> {
    const reg = this.r.registration(kind)
    const doc = await this.r.store().get(actorKey(kind, id))
    return doc ? record(reg, doc) : null
  }

  async list(kind: string, opts: { state?: string; limit?: number }): Promise<ActorRecord[]> {
    const reg = this.r.registration(kind)
    return (await this.r.store().list(kind, opts)).map((doc) => record(reg, doc))
  }

  async settle(kind: string, id: string, timeoutMs?: number, until?: SettledWhen): Promise<ActorRecord> {
    const reg = this.r.registration(kind)
    return record(reg, await settled(this.target(kind, id), timeoutMs, until))
  }

  reach(kind: string, id: string, until: SettledWhen, timeoutMs?: number): Promise<SnapshotView> {
    this.r.registration(kind)
    return reached(this.target(kind, id), until, timeoutMs)
  }

  private target(kind: string, id: string): SettleTarget {
    const key = actorKey(kind, id)
    return {
      key,
      live: this.r.residency().get(key),
      stored: () => this.r.store().get(key),
      held: () => this.r.held()?.get(key)?.lastStored ?? null,
      drained: () => this.r.queue.run(key, async () => {}),
      ...(this.r.clock ? { clock: this.r.clock } : {}),
    }
  }
}

function record(reg: Registration, doc: StoredActor): ActorRecord {
  const versionMismatch = doc.version === reg.spec.version ? null : { stored: doc.version, current: reg.spec.version }
  return { ...doc, versionMismatch }
}
