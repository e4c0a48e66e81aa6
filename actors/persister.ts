/**
 * Writes a live actor's snapshot to the store when it changed, and keeps its durable timers in
 * step with the deadlines in that snapshot (write order explained in deadlines.ts).
 * Always called from the actor's serial queue, so two flushes of one actor never interleave.
 */
import type { AnyMachineSnapshot } from 'xstate'
import { iso, type Clock } from '../src/clock'
import type { Coordination } from '../src/coordination/port'
import type { Logger } from '../src/logger'
import { checkDeadlines, earliest, planTimers, timerId, type Fired, type TimerPayload } from './deadlines'
import { hasRunningChildren, type LiveActor } from './live-actor'
import type { SnapshotStore } from './snapshot-store'
import type { ActorKindSpec, Deadline, StoredActor } from './types'

export interface PersisterDeps {
  snapshots: SnapshotStore
  coordination: Coordination
  clock: Clock
  logger: Logger
  /** Tells the timer pump a timer was scheduled (so it can wake early for it). */
  scheduled: (dueAt: number) => void
}

export class Persister {
  constructor(private readonly deps: PersisterDeps) {}

  /**
   * Persists the actor's current snapshot if it differs from the stored one and returns it.
   * `fired` is the durable timer whose delivery caused this flush, if any.
   */
  async flush(live: LiveActor, spec: ActorKindSpec, fired?: Fired): Promise<AnyMachineSnapshot> {
    const snap = live.actor.getSnapshot() as AnyMachineSnapshot
    if (snap === live.lastSnapshot) return this.unchanged(live, snap, fired)
    const persisted = live.actor.getPersistedSnapshot()
    const json = JSON.stringify(persisted)
    if (json === live.lastJson) {
      live.lastSnapshot = snap
      return this.unchanged(live, snap, fired)
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
      pendingWork: snap.status === 'active' && (hasRunningChildren(persisted) || (spec.pendingWork?.(snap) ?? false)),
      createdAt: live.createdAt,
      updatedAt: now,
    }
    if (snap.status === 'error') doc.error = String(snap.error)
    await this.deps.snapshots.put(doc)
    live.lastSnapshot = snap
    live.lastJson = json
    live.deadlines = this.withoutIgnored(live, deadlines, plan.ignoredDue)
    await this.schedule(live, plan.after)
    for (const name of plan.cancel) await this.deps.coordination.cancelTimer(timerId(live.kind, live.id, name))
    return snap
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
