/**
 * The shapes the actor runtime shares with its callers: how an actor kind is registered, what a
 * stored actor document holds, and the snapshot view handed back across instances.
 */
import type { AnyStateMachine, EventFromLogic, InputFrom, InspectionEvent, Observer, SnapshotFrom, StateValue } from 'xstate'
import type { Clock } from '../src/clock'
import type { Coordination } from '../src/coordination/port'
import type { Logger } from '../src/logger'
import type { DocumentStore } from '../src/store/port'
import type { Asked } from './ask'
import type { TimerPumpOptions } from './timer-pump'

/** Where a live actor reports its inspection events (@statelyai/inspect's observer, or a plain function). */
export type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void)

/** A pending wait the machine keeps in context as an absolute instant (service-clock epoch ms). */
export interface Deadline {
  /** Stable per wait (e.g. `erase`, `retry`): the durable timer id is derived from it. */
  name: string
  at: number
}

/** An event the chart emitted, stored with the snapshot until the kind's `emitted` hook took it. */
export interface OutboxEntry {
  /** Unique and stable per actor: `<kind>:<resourceId>:<seq>`, so a re-delivery is recognisable. */
  id: string
  event: { type: string; [field: string]: unknown }
}

/** What the stored snapshot was written with, handed to a kind's migration hook. */
export interface StoredVersion {
  version: number
  state: StateValue
  snapshot: unknown
}

export interface ActorKindSpec<M extends AnyStateMachine = AnyStateMachine> {
  /** The chart, already `.provide()`d with its real effects. */
  machine: M
  /** Bump when the chart changes shape; stored snapshots carry it. */
  version: number
  /** The deadlines the snapshot is waiting for; each one becomes a durable timer. */
  deadlines?: (snapshot: SnapshotFrom<M>) => Deadline[]
  /**
   * Extra "pending work" beyond the default (a running invoked actor): states whose work must be
   * resumed in memory at boot even though nothing in the snapshot is running.
   */
  pendingWork?: (snapshot: SnapshotFrom<M>) => boolean
  /**
   * Migration hook. Called when a stored snapshot's version differs from `version`: return a
   * persisted snapshot valid for the current chart (it is resumed and re-stored under the new
   * version), or null to refuse (the actor is reported as mismatched and left untouched).
   */
  migrate?: (stored: StoredVersion) => unknown | null
  /** Wall-clock ms without events before the actor is passivated; 0 = as soon as it is idle. */
  idleMs?: number
  /**
   * Where the chart's emitted domain events go (`emit()` in the chart): typically the event bus.
   * Called after the snapshot that emitted them is stored, at least once per event (again after a
   * crash between storing and handing over), with an id that is the same on every call: make the
   * hand-over idempotent by it (EventBus.publish takes it as the event id).
   */
  emitted?: (resourceId: string, event: OutboxEntry['event'], id: string) => Promise<void>
  /**
   * Called after each stored change of an actor's snapshot (a read model's projection, e.g. call
   * rows). A failure is logged, not retried: the next change projects the whole state again.
   */
  persisted?: (resourceId: string, snapshot: SnapshotFrom<M>) => Promise<void>
}

/** One document per actor in the `actor_snapshots` collection. */
export interface StoredActor {
  /** `kind:resourceId` */
  id: string
  kind: string
  resourceId: string
  version: number
  /** The state value (a string for flat charts), indexed for "actors of a kind in a state". */
  state: StateValue
  status: 'active' | 'done' | 'error' | 'stopped'
  /** `actor.getPersistedSnapshot()`: what createActor({ snapshot }) resumes from. */
  snapshot: unknown
  deadlines: Deadline[]
  /** Earliest deadline (or null): lets operators list actors by their next wake-up. */
  nextDeadlineAt: number | null
  /** True while an invoked effect was running at the last persist: boot resumes it. */
  pendingWork: boolean
  /** Emitted events not yet handed to the kind's `emitted` hook (absent: none). */
  outbox?: OutboxEntry[]
  /** True while `outbox` holds anything: boot hands those over. */
  hasOutbox?: boolean
  /** Emitted events so far (outbox ids count from it). */
  emitSeq?: number
  createdAt: string
  updatedAt: string
  [field: string]: unknown
}

/** What `read` and `list` return: the stored document plus whether this chart can resume it. */
export interface ActorRecord extends StoredActor {
  versionMismatch: { stored: number; current: number } | null
}

/**
 * What a caller of settle() waits for, read off a live snapshot or a stored one (both carry `value`
 * and `context`): a route answering once one effect's outcome is known, not all that follow it.
 */
export type SettledWhen = (snapshot: { value: StateValue; context: unknown }) => boolean

/** The part of a snapshot that crosses instances when an event is forwarded to the owner. */
export interface SnapshotView {
  value: StateValue
  context: unknown
  status: StoredActor['status']
  output?: unknown
}

/** What the console shows for one actor (`GET /console/actors/{id}`). */
export interface ActorDescription {
  id: string
  kind: string
  resourceId: string
  /** True when this instance holds it in memory right now. */
  live: boolean
  /** The instance holding its lease, if any. */
  owner: string | null
  version: number
  currentVersion: number
  value: StateValue
  status: string
  context: unknown
  deadlines: Deadline[]
  pendingWork: boolean
  updatedAt: string | null
}

export interface ActorRuntimeOptions {
  store: DocumentStore
  coordination: Coordination
  clock: Clock
  logger: Logger
  /** Unique per running process (e.g. hostname + pid + random): lease owner and forwarding address. */
  instanceId: string
  /** Inspection observer for every actor (see inspection.ts `createInspection`). */
  inspect?: InspectObserver
  /** Timer pump tuning (defaults in timer-pump.ts); `beforeAck` is a test hook. */
  timers?: Pick<TimerPumpOptions, 'pollMs' | 'claimLeaseMs' | 'batch' | 'beforeAck'>
  /** Default DEFAULT_FORWARD_TIMEOUT_MS (forwarding.ts). */
  forwardTimeoutMs?: number
  /** Default LEASE_TTL_MS (leases.ts). */
  leaseTtlMs?: number
}

/**
 * A change of an actor's state value, heard once it is stored (ActorRuntime.onTransition). `from`
 * is the value stored before (null for a new actor), as stored by whichever instance held it: each
 * change is heard once, on the instance that stored it.
 */
export interface Transition {
  kind: string
  id: string
  from: unknown
  to: unknown
  context: unknown
}

export interface SendOptions {
  /** Spawn with this input when the actor does not exist (else ActorNotFoundError). */
  input?: unknown
}

/** A kind's typed view of the runtime, returned by `register`. */
export interface ActorKind<M extends AnyStateMachine> {
  readonly kind: string
  spawn(id: string, input: InputFrom<M>): Promise<SnapshotFrom<M>>
  send(id: string, event: EventFromLogic<M>, opts?: { input?: InputFrom<M> }): Promise<SnapshotFrom<M>>
  /** Sends like `send` and answers whether the chart applied or refused this very event (see ActorRuntime.ask). */
  ask(id: string, event: EventFromLogic<M>, opts?: { input?: InputFrom<M> }): Promise<Asked<SnapshotFrom<M>>>
  read(id: string): Promise<ActorRecord | null>
  /**
   * Waits until no effect is in flight — or, with `until`, until the snapshot shows what the caller
   * waits for, whichever comes first — and returns the stored actor (see ActorRuntime.settle).
   */
  settle(id: string, timeoutMs?: number, until?: SettledWhen): Promise<ActorRecord>
  /** Waits until the snapshot shows what `until` waits for, and returns it unstored where held live (see ActorRuntime.reach). */
  reach(id: string, until: SettledWhen, timeoutMs?: number): Promise<SnapshotView>
}

/** A registered kind as the runtime keeps it. */
export interface Registration {
  kind: string
  spec: ActorKindSpec
  idleMs: number
}
