/**
 * Writes a live actor's snapshot to the store when it changed, and keeps its durable timers in
 * step with the deadlines in that snapshot (write order explained in deadlines.ts).
 * Always called from the actor's serial queue, so two flushes of one actor never interleave.
 */
import type { AnyMachineSnapshot } from 'xstate'
import { type Clock, iso } from '../src/clock'
import type { Coordination } from '../src/coordination/port'
import type { Logger } from '../src/logger'
import { checkDeadlines, earliest, type Fired, planTimers, type TimerPayload, timerId } from './deadlines'
import { hasRunningChildren, type LiveActor } from './live-actor'
import type { SnapshotStore } from './snapshot-store'
import type { ActorKindSpec, Deadline, StoredActor, Transition } from './types'

export interface PersisterDeps {
  snapshots: SnapshotStore
  coordination: Coordination
  clock: Clock
  logger: Logger
  /** Tells the timer pump a timer was scheduled (so it can wake early for it). */
  scheduled: (dueAt: number) => void
  /** A stored change of state value (ActorRuntime.onTransition). */
  transitioned?: (t: Transition) => void
}

export class Persister {
  constructor(private readonly deps: PersisterDeps) {}

  /**
   * Persists the actor's current snapshot if it differs from the stored one and returns it.
   * `fired` is the durable timer whose delivery caused this flush, if any.
   */
  async flush(live: LiveActor, spec: ActorKindSpec, fired?: Fired): Promise<AnyMachineSnapshot> {
    const snap = live.actor.getSnapshot() as AnyMachineSnapshot
    const emitting = live.emitted.length > 0
    if (snap === live.lastSnapshot && !emitting) return this.unchanged(live, snap, fired)
    const persisted = live.actor.getPersistedSnapshot()
    const json = JSON.stringify(persisted)
    if (json === live.lastJson && !emitting) {
      live.lastSnapshot = snap
      return this.unchanged(live, snap, fired)
    }
    // Emitted events join the outbox and are stored in the same write as the snapshot that emitted
    // them, so a crash can lose neither one without the other.
    for (const event of live.emitted.splice(0)) {
      live.emitSeq += 1
      live.outbox.push({ id: `${live.kind}:${live.id}:${live.emitSeq}`, event: JSON.parse(JSON.stringify(event)) })
    }
    // A finished or failed actor waits for nothing: its timers go.
    const deadlines = snap.status === 'active' ? checkDeadlines(live.kind, spec.deadlines?.(snap) ?? []) : []
    const plan = planTimers(live.deadlines, deadlines, fired)
    await this.schedule(live, plan.before)
    const now = iso(this.deps.clock.now())
    live.createdAt ??= now
    const doc: StoredActor = {
      id: live.key,
      kind: live.kind,
      resourceId: live.id,
      version: spec.version,
      state: snap.value,
      status: snap.status,
      // Plain JSON (what a reload yields), detached from the live actor's objects.
      snapshot: JSON.parse(json),
      deadlines,
      nextDeadlineAt: earliest(deadlines),
      // An outbox not yet handed over is work for the next boot too (outbox.ts), so it shares the flag.
      pendingWork: (snap.status === 'active' && (hasRunningChildren(persisted) || (spec.pendingWork?.(snap) ?? false))) || live.outbox.length > 0,
      outbox: [...live.outbox],
      hasOutbox: live.outbox.length > 0,
      emitSeq: live.emitSeq,
      createdAt: live.createdAt,
      updatedAt: now,
    }
    if (snap.status === 'error') doc.error = String(snap.error)
    await this.deps.snapshots.put(doc)
    live.lastStored = doc
    live.lastSnapshot = snap
    live.lastJson = json
    this.noteTransition(live, snap)
    live.deadlines = this.withoutIgnored(live, deadlines, plan.ignoredDue)
    await this.schedule(live, plan.after)
    for (const name of plan.cancel) await this.deps.coordination.cancelTimer(timerId(live.kind, live.id, name))
    if (spec.persisted) {
      try {
        await spec.persisted(live.id, snap)
      } catch (err) {
        this.deps.logger.error({ err, actor: live.key }, 'actor projection failed; the next change projects it again')
      }
    }
    if (live.outbox.length > 0) await this.handOver(live, spec, doc)
    return snap
  }

  private noteTransition(live: LiveActor, snap: AnyMachineSnapshot): void {
    const state = JSON.stringify(snap.value)
    if (state === live.storedState) return
    const from = live.storedState === null ? null : JSON.parse(live.storedState)
    live.storedState = state
    try {
      this.deps.transitioned?.({ kind: live.kind, id: live.id, from, to: snap.value, context: snap.context })
    } catch (err) {
      this.deps.logger.error({ err, actor: live.key }, 'a transition listener failed')
    }
  }

  /**
   * A resumed actor's projection, brought in step with its stored snapshot: the snapshot and its
   * projection are two writes, and the instance that stored the one may have died before the other
   * (a call stored `missed` whose row still said `ringing`). Projections are idempotent; a failure
   * is logged and left to the next change, as in `flush`.
   */
  async reproject(live: LiveActor, spec: ActorKindSpec): Promise<void> {
    if (!spec.persisted) return
    try {
      await spec.persisted(live.id, live.actor.getSnapshot() as AnyMachineSnapshot)
    } catch (err) {
      this.deps.logger.error({ err, actor: live.key }, 'actor projection failed; the next change projects it again')
    }
  }

  /** Boot: hands over what a crash left in a live (resumed) actor's stored outbox. */
  async deliverOutbox(live: LiveActor, spec: ActorKindSpec): Promise<void> {
    if (live.outbox.length === 0) return
    const doc = await this.deps.snapshots.get(live.key)
    if (doc) await this.handOver(live, spec, doc)
  }

  /**
   * Hands the stored outbox to the kind's `emitted` hook, then stores it empty. A failure leaves
   * the rest stored (boot and the next flush try again); ids keep a repeated hand-over recognisable.
   */
  private async handOver(live: LiveActor, spec: ActorKindSpec, doc: StoredActor): Promise<void> {
    if (!spec.emitted) {
      live.outbox.length = 0
      return
    }
    try {
      while (live.outbox.length > 0) {
        const entry = live.outbox[0]
        await spec.emitted(live.id, entry.event, entry.id)
        live.outbox.shift()
      }
    } catch (err) {
      this.deps.logger.error({ err, actor: live.key }, 'emitted event not handed over; kept in the outbox for a retry')
    }
    const snap = live.actor.getSnapshot() as AnyMachineSnapshot
    const running = snap.status === 'active' && (hasRunningChildren(doc.snapshot) || (spec.pendingWork?.(snap) ?? false))
    const handedOver = { ...doc, outbox: [...live.outbox], hasOutbox: live.outbox.length > 0, pendingWork: running || live.outbox.length > 0 }
    await this.deps.snapshots.put(handedOver)
    live.lastStored = handedOver
  }

  /** Nothing to store; but a delivered timer whose deadline is still ahead must be re-armed. */
  private async unchanged(live: LiveActor, snap: AnyMachineSnapshot, fired?: Fired): Promise<AnyMachineSnapshot> {
    if (fired) {
      const plan = planTimers(live.deadlines, live.deadlines, fired)
      await this.schedule(live, plan.before)
      live.deadlines = this.withoutIgnored(live, live.deadlines, plan.ignoredDue)
    }
    return snap
  }

  private async schedule(live: LiveActor, list: Deadline[]): Promise<void> {
    for (const d of list) {
      const payload: TimerPayload = { kind: live.kind, id: live.id, name: d.name, at: d.at }
      await this.deps.coordination.scheduleTimer({ id: timerId(live.kind, live.id, d.name), dueAt: d.at, payload })
      this.deps.scheduled(d.at)
    }
  }

  /**
   * A due deadline the machine did not act on is not re-armed (it would fire again at once,
   * forever). It is dropped from the in-memory mirror of the timers, so the next persisted change
   * that still lists it schedules it again: one more wake-up per change, never a loop.
   */
  private withoutIgnored(live: LiveActor, list: Deadline[], ignored: Deadline[]): Deadline[] {
    if (ignored.length === 0) return list
    this.deps.logger.warn({ actor: live.key, deadlines: ignored }, 'actor ignored a due deadline; its timer is not re-armed')
    const names = new Set(ignored.map((d) => d.name))
    return list.filter((d) => !names.has(d.name))
  }
}
