/**
 * Which actors this instance holds in memory, and the moves between "stored" and "live":
 * resume (under the actor's lease, from its stored snapshot, through the version check), persist
 * every change, and drop (passivation, failure, lost lease). Every method that touches one actor
 * runs inside that actor's serial-queue job; the runtime guarantees it.
 */
import type { AnyMachineSnapshot, EventObject } from 'xstate'
import type { Logger } from '../src/logger'
import { ActorNotFoundError, ActorUnavailableError, VersionMismatchError } from './errors'
import type { ActorLeases } from './leases'
import { type InspectObserver, LiveActor, type LiveActorInit } from './live-actor'
import type { Persister } from './persister'
import type { SerialQueue } from './serial-queue'
import type { SnapshotStore } from './snapshot-store'
import { firedOf } from './timer-delivery'
import type { Registration, SnapshotView, StoredActor } from './types'

/** Where an event for an actor goes: the live actor here, its owner elsewhere, or nowhere (finished). */
export type Target = { type: 'live'; live: LiveActor } | { type: 'remote'; owner: string } | { type: 'final'; snapshot: AnyMachineSnapshot }

export interface ResidencyDeps {
  queue: SerialQueue
  leases: ActorLeases
  snapshots: SnapshotStore
  persister: Persister
  logger: Logger
  inspect?: InspectObserver
  /** Asks the runtime to passivate (through the actor's queue). */
  passivate: (reg: Registration, id: string) => void
}

export class Residency {
  private readonly live = new Map<string, LiveActor>()
  /** Unfinished actors passivated here since start, by kind (finished ones leaving memory are not counted). */
  readonly passivated = new Map<string, number>()

  constructor(private readonly deps: ResidencyDeps) {}

  get(key: string): LiveActor | undefined {
    return this.live.get(key)
  }

  get size(): number {
    return this.live.size
  }

  all(): LiveActor[] {
    return [...this.live.values()]
  }

  /** The live actor (resumed from the store under a fresh lease), or who holds it, or its final snapshot. */
  async acquire(reg: Registration, id: string, key: string, input: unknown): Promise<Target> {
    const held = this.live.get(key)
    if (held) return { type: 'live', live: held }
    const { leases } = this.deps
    if (!(await leases.take(key))) {
      const owner = await leases.ownerOf(key)
      if (owner !== null && owner !== leases.owner) return { type: 'remote', owner }
      // The lease lapsed between the two calls: one more try.
      if (!(await leases.take(key))) throw new ActorUnavailableError(`${key}: could not take its lease`)
    }
    try {
      // Read only under the lease: the previous owner stored its last snapshot before releasing it.
      const doc = await this.deps.snapshots.get(key)
      if (!doc) {
        if (input === undefined) throw new ActorNotFoundError(`${key} does not exist`)
        return { type: 'live', live: this.start(reg, id, key, { input }) }
      }
      if (doc.status !== 'active') {
        // A finished actor never changes again: answer from the store, hold nothing.
        await leases.release(key)
        const context = (doc.snapshot as { context?: unknown } | null)?.context
        return { type: 'final', snapshot: fromView(reg, { value: doc.state, context, status: doc.status }) }
      }
      const { snapshot, migrated } = this.resumable(reg, doc)
      const stored = { json: migrated ? null : JSON.stringify(doc.snapshot), deadlines: doc.deadlines, createdAt: doc.createdAt, outbox: doc.outbox, emitSeq: doc.emitSeq }
      const live = this.start(reg, id, key, { snapshot, stored })
      await this.deps.persister.reproject(live, reg.spec)
      return { type: 'live', live }
    } catch (err) {
      await leases.release(key)
      throw err
    }
  }

  /** A brand-new actor (the caller checked that the id is free and holds the lease). */
  async create(reg: Registration, id: string, key: string, input: unknown): Promise<AnyMachineSnapshot> {
    let live: LiveActor
    try {
      live = this.start(reg, id, key, { input })
    } catch (err) {
      await this.deps.leases.release(key)
      throw err
    }
    return this.persist(reg, live)
  }

  /** Flushes; a failed write drops the actor, so memory never runs ahead of the store for long. */
  async persist(reg: Registration, live: LiveActor, cause?: EventObject): Promise<AnyMachineSnapshot> {
    try {
      return await this.deps.persister.flush(live, reg.spec, cause ? firedOf(cause) : undefined)
    } catch (err) {
      await this.drop(live)
      throw err
    }
  }

  /** Passivation proper: false (and nothing done) while an effect is in flight. */
  async passivate(reg: Registration, key: string): Promise<boolean> {
    const live = this.live.get(key)
    if (!live || live.busy()) return false
    await this.deps.persister.flush(live, reg.spec)
    const unfinished = live.status === 'active'
    await this.drop(live)
    if (unfinished) this.passivated.set(live.kind, (this.passivated.get(live.kind) ?? 0) + 1)
    return true
  }

  /** After a job on `key`: finished actors leave memory at once; idleMs 0 kinds once nothing is queued. */
  afterJob(reg: Registration, key: string): void {
    const live = this.live.get(key)
    if (!live || this.deps.queue.depth(key) > 0) return
    if (live.status !== 'active' || (reg.idleMs === 0 && !live.busy())) this.deps.passivate(reg, live.id)
  }

  /** Stops the actor and forgets it; `release` false when the lease is already someone else's. */
  async drop(live: LiveActor, release = true): Promise<void> {
    if (this.live.get(live.key) === live) this.live.delete(live.key)
    live.stop()
    if (release) await this.deps.leases.release(live.key)
  }

  /**
   * Stops every actor and releases its lease (at stop), together: a release that fails
   * (coordination down) is left to lapse with its ttl, as the process is going either way, and
   * one bounded wait beats one per actor.
   */
  async dropAll(): Promise<void> {
    const dropped = await Promise.allSettled(this.all().map((live) => this.drop(live)))
    const reasons = dropped.flatMap((d) => (d.status === 'rejected' ? [d.reason as unknown] : []))
    if (reasons.length > 0) this.deps.logger.warn({ failed: reasons.length, err: reasons[0] }, 'actor leases not released at stop; they lapse with their ttl')
  }

  /** Renews every held lease; an actor whose lease was lost is dropped without another write. */
  async renewLeases(): Promise<void> {
    const { leases, queue, logger } = this.deps
    for (const live of this.all()) {
      if (await leases.take(live.key)) continue
      logger.error({ actor: live.key, owner: await leases.ownerOf(live.key) }, 'actor lease lost; dropping it from memory')
      await queue.run(live.key, async () => {
        if (this.live.get(live.key) === live) await this.drop(live, false)
      })
    }
  }

  private resumable(reg: Registration, doc: StoredActor): { snapshot: unknown; migrated: boolean } {
    if (doc.version === reg.spec.version) return { snapshot: doc.snapshot, migrated: false }
    const migrated = reg.spec.migrate?.({ version: doc.version, state: doc.state, snapshot: doc.snapshot }) ?? null
    if (migrated !== null) {
      this.deps.logger.info({ actor: doc.id, from: doc.version, to: reg.spec.version }, 'actor snapshot migrated')
      return { snapshot: migrated, migrated: true }
    }
    this.deps.logger.warn({ actor: doc.id, stored: doc.version, current: reg.spec.version }, 'actor snapshot version mismatch; not resumed')
    throw new VersionMismatchError(`${doc.id} was stored by chart version ${doc.version}; this chart is version ${reg.spec.version}`)
  }

  private start(reg: Registration, id: string, key: string, from: Pick<LiveActorInit, 'input' | 'snapshot' | 'stored'>): LiveActor {
    const live = new LiveActor({
      ...from,
      kind: reg.kind,
      id,
      key,
      machine: reg.spec.machine,
      inspect: this.deps.inspect,
      onChange: (l) => this.changed(reg, l),
      onError: (l, err) => {
        this.deps.logger.error({ err, actor: l.key }, 'actor failed; its error state is stored')
        this.changed(reg, l)
      },
    })
    this.live.set(key, live)
    return live
  }

  /** A change not caused by an event sent through the runtime (an effect finished): persist it in turn. */
  private changed(reg: Registration, live: LiveActor): void {
    live.touch()
    if (live.flushQueued) return
    live.flushQueued = true
    void this.deps.queue
      .run(live.key, async () => {
        live.flushQueued = false
        if (this.live.get(live.key) === live) await this.persist(reg, live)
      })
      .then(
        () => this.afterJob(reg, live.key),
        (err: unknown) => this.deps.logger.error({ err, actor: live.key }, 'actor snapshot could not be stored'),
      )
  }
}

/** A snapshot object rebuilt from its JSON parts (forwarded answers, finished actors). */
export function fromView(reg: Registration, view: SnapshotView): AnyMachineSnapshot {
  return reg.spec.machine.resolveState({ value: view.value, context: view.context, status: view.status, output: view.output })
}
