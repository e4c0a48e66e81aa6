/**
 * One actor held in memory: the XState actor plus what the runtime needs to persist it
 * (the last persisted snapshot and deadlines) and to decide when it may be passivated.
 */
import { type Actor, type AnyMachineSnapshot, type AnyStateMachine, createActor, type EventObject, type Subscription } from 'xstate'
import type { Deadline, InspectObserver, OutboxEntry, StoredActor } from './types'

export type { InspectObserver }

export interface LiveActorInit {
  kind: string
  id: string
  key: string
  machine: AnyStateMachine
  /** New actor: its input. */
  input?: unknown
  /** Resumed actor: the persisted snapshot to resume from. */
  snapshot?: unknown
  /** What the store holds for it already (resumed actors). */
  stored?: { json: string | null; deadlines: Deadline[]; createdAt: string; outbox?: OutboxEntry[]; emitSeq?: number }
  inspect?: InspectObserver
  /** Called on every snapshot the actor emits, including ones caused by its invoked effects. */
  onChange: (live: LiveActor) => void
  /** The machine threw (the actor's status is now `error`). */
  onError: (live: LiveActor, err: unknown) => void
}

export class LiveActor {
  readonly kind: string
  readonly id: string
  readonly key: string
  readonly actor: Actor<AnyStateMachine>
  /** The snapshot object last persisted (identity check: XState returns the same object when nothing changed). */
  lastSnapshot: AnyMachineSnapshot | null = null
  /** JSON of the last persisted snapshot (null: never persisted, or must be rewritten). */
  lastJson: string | null
  /** Deadlines as last persisted: the durable timers mirror them. */
  deadlines: Deadline[]
  /** When it was first stored (null until its first persist). */
  createdAt: string | null
  /** Wall-clock ms of the last event or change: idle time for passivation. */
  lastActiveAt = Date.now()
  /** A flush of an effect-driven change is already queued. */
  flushQueued = false
  /** Domain events the chart emitted (`emit()`) since the last flush: stored with the next snapshot. */
  emitted: EventObject[] = []
  /**
   * The document last stored for it (null: not stored by this instance yet). While this instance
   * holds the actor, nobody else writes it, so this is what a read of the store would return:
   * settle() answers from it instead of reading and parsing the document again.
   */
  lastStored: StoredActor | null = null
  /** JSON of the state value as last stored (null: a new actor, never stored): transitions compare with it. */
  storedState: string | null = null
  /** Emitted events stored in the outbox and not yet handed over (see persister.ts). */
  outbox: OutboxEntry[]
  /** The sequence number of the last emitted event: outbox entries' ids derive from it. */
  emitSeq: number
  private readonly subscription: Subscription
  private readonly emitSubscription: Subscription

  constructor(init: LiveActorInit) {
    this.kind = init.kind
    this.id = init.id
    this.key = init.key
    this.lastJson = init.stored?.json ?? null
    this.deadlines = init.stored?.deadlines ?? []
    this.createdAt = init.stored?.createdAt ?? null
    this.outbox = init.stored?.outbox ?? []
    this.emitSeq = init.stored?.emitSeq ?? 0
    this.actor = createActor(init.machine, {
      id: init.key,
      input: init.input,
      snapshot: init.snapshot as AnyMachineSnapshot | undefined,
      inspect: init.inspect,
    })
    // Read before start: the value as stored, before anything the start causes.
    if (init.snapshot !== undefined) this.storedState = JSON.stringify(this.actor.getSnapshot().value)
    // Subscribed before start so the initial snapshot and anything the start causes are seen;
    // the error observer keeps a throwing action from becoming an unhandled error.
    this.subscription = this.actor.subscribe({
      next: () => init.onChange(this),
      error: (err) => init.onError(this, err),
    })
    // Emitted domain events are kept for the persister, which stores them with the snapshot.
    this.emitSubscription = this.actor.on('*', (event) => {
      this.emitted.push(event as EventObject)
      init.onChange(this)
    })
    this.actor.start()
  }

  touch(): void {
    this.lastActiveAt = Date.now()
  }

  get status(): AnyMachineSnapshot['status'] {
    return this.actor.getSnapshot().status
  }

  /**
   * In-memory work that passivation would lose: a running invoked (or spawned) actor, i.e. an
   * effect in flight, or an XState delayed event (`after`), which lives only in memory.
   */
  busy(): boolean {
    const snap = this.actor.getSnapshot()
    if (snap.status !== 'active') return false
    for (const child of Object.values(snap.children ?? {})) {
      if ((child as { getSnapshot(): { status: string } }).getSnapshot().status === 'active') return true
    }
    return Object.keys(this.actor.system.getSnapshot()._scheduledEvents).length > 0
  }

  stop(): void {
    this.subscription.unsubscribe()
    this.emitSubscription.unsubscribe()
    this.actor.stop()
  }
}

/** True when a persisted snapshot records a running child actor: an effect that was in flight. */
export function hasRunningChildren(persisted: unknown): boolean {
  const children = (persisted as { children?: Record<string, { snapshot?: { status?: string } }> } | null)?.children
  if (!children) return false
  return Object.values(children).some((c) => c?.snapshot?.status === 'active')
}
