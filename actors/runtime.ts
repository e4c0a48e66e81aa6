/**
 * The actor runtime: every stateful resource is an XState actor, found by `kind` and resource id.
 *
 * - get-or-spawn: `send` delivers to the actor held in memory, or resumes it from its stored
 *   snapshot; events to one actor run strictly in order through a per-actor serial queue, and
 *   `send` resolves once the resulting snapshot is stored.
 * - persistence: after every change of snapshot (events, and effects finishing) the snapshot is
 *   written to `actor_snapshots` with the chart version; deadlines become durable timers.
 * - passivation: an actor idle for `idleMs` is stopped and forgotten; nothing of it stays in memory.
 * - one actor per resource across instances: holding an actor in memory requires its lease
 *   (`actor:<kind>:<id>`); an instance without it forwards the event to the owner (forwarding.ts).
 *
 * Pending work, precisely: a stored snapshot has pending work when it records a running child
 * actor, i.e. an invoked effect was in flight when it was written (or the kind's `pendingWork`
 * says so). Only those actors are resumed at boot: resuming re-runs the effect, which nothing else
 * would do. An actor whose only pending work is a deadline is NOT resumed: its durable timer
 * wakes it through `send`, so until then it costs no memory.
 *
 * Version mismatch: a stored snapshot from another chart version is never resumed silently.
 * The kind's `migrate` hook may turn it into a snapshot for the current chart; otherwise `send`
 * throws VersionMismatchError, `read` reports `versionMismatch`, boot skips it, its timers stay
 * pending, and a warning is logged.
 */
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine, SnapshotFrom } from 'xstate'
import { type Clock, hostPaced } from '../src/clock'
import type { Logger } from '../src/logger'
import type { Asked } from './ask'
import { runtimeChores } from './chores'
import { parseTimerPayload } from './deadlines'
import { Dispatcher } from './dispatch'
import { ActorExistsError, UnknownKindError } from './errors'
import { Forwarder } from './forwarding'
import { Handover } from './handover'
import { Housekeeper } from './housekeeper'
import type { MachineDefinition } from './inspection'
import { Introspection } from './introspection'
import { ActorLeases, LEASE_TTL_MS } from './leases'
import { deliverOutboxes } from './outbox'
import { DEFAULT_IDLE_MS, isIdle, sweepMs } from './passivation'
import { ActorReads } from './reads'
import type { Residency } from './residency'
import { DueRun } from './run-due'
import { SerialQueue } from './serial-queue'
import { actorKey, type SnapshotStore } from './snapshot-store'
import { openStorage, type Storage } from './storage'
import { deliverTimer } from './timer-delivery'
import { TimerPump } from './timer-pump'
import { TimerRebuild } from './timer-rebuild'
import type { ActorDescription, ActorKind, ActorKindSpec, ActorRecord, ActorRuntimeOptions, Registration, SendOptions, SettledWhen, SnapshotView, Transition } from './types'

export type { ActorKind, ActorRuntimeOptions, SendOptions, Transition } from './types'

export class ActorRuntime {
  private readonly kinds = new Map<string, Registration>()
  private readonly queue = new SerialQueue()
  private readonly leases: ActorLeases
  private readonly pump: TimerPump
  private readonly forwarder: Forwarder
  private readonly dispatcher: Dispatcher
  private readonly keeper: Housekeeper
  private readonly handover: Handover
  private readonly introspection: Introspection
  private readonly reads: ActorReads
  private readonly timerRebuild: TimerRebuild
  private readonly dueRun: DueRun
  private storage: Storage | null = null
  private readonly transitionListeners: ((t: Transition) => void)[] = []

  constructor(private readonly opts: ActorRuntimeOptions) {
    const { coordination, instanceId, clock, logger } = opts
    this.leases = new ActorLeases(coordination, instanceId, opts.leaseTtlMs ?? LEASE_TTL_MS)
    const settleWoken = (kind: string, id: string) => (this.kinds.has(kind) ? this.settle(kind, id).catch(() => null) : Promise.resolve(null))
    this.dueRun = new DueRun({ deliverDue: (now) => this.pump.runDue(now), settle: settleWoken, logger })
    this.pump = new TimerPump({
      ...opts.timers,
      coordination,
      clock,
      logger,
      deliver: (timer, now) => {
        const target = parseTimerPayload(timer.payload)
        if (target) this.dueRun.woke(target)
        return deliverTimer(this, logger, timer, now)
      },
    })
    const core = { queue: this.queue, leases: this.leases, residency: () => this.res(), registration: (kind: string) => this.registration(kind) }
    const parts = { ...core, instanceId, kinds: this.kinds, held: () => this.storage?.residency ?? null, store: () => this.store() }
    this.handover = new Handover({ ...parts, coordination, clock, logger, pump: this.pump, passivateAll: () => this.passivateIdle(true), deliverOutboxes: () => this.deliverOutboxes() })
    this.introspection = new Introspection(parts)
    this.reads = new ActorReads({ ...parts, clock: hostPaced(clock) })
    this.dispatcher = new Dispatcher({ ...core, forwarder: () => this.forwarder, draining: () => this.handover.draining, clock: hostPaced(clock) })
    this.forwarder = new Forwarder({ coordination, instanceId, logger, timeoutMs: opts.forwardTimeoutMs, clock: hostPaced(clock), handle: (req) => this.dispatcher.answer(req) })
    this.timerRebuild = new TimerRebuild({ coordination, logger, snapshots: () => this.store(), restored: (at) => this.pump.nudge(at) })
    const chores = runtimeChores({
      handover: this.handover,
      leases: this.leases,
      timerRebuild: this.timerRebuild,
      residency: () => this.res(),
      sweepMs: () => sweepMs(this.kinds.values()),
      passivateIdle: () => this.passivateIdle(),
    })
    this.keeper = new Housekeeper(chores, logger, hostPaced(clock))
  }

  get instanceId(): string {
    return this.opts.instanceId
  }

  /** The service clock every actor's instants are read from (kinds bind their effects to it). */
  get clock(): Clock {
    return this.opts.clock
  }

  get logger(): Logger {
    return this.opts.logger
  }

  /** Registers a kind. Register every kind before `start()` (boot resumes registered kinds only). */
  register<M extends AnyStateMachine>(kind: string, spec: ActorKindSpec<M>): ActorKind<M> {
    if (kind === '' || kind.includes(':')) throw new Error(`actor kind must be non-empty without ':' (${kind})`)
    if (this.kinds.has(kind)) throw new Error(`actor kind ${kind} is registered already`)
    this.kinds.set(kind, { kind, spec, idleMs: spec.idleMs ?? DEFAULT_IDLE_MS })
    return this.view<M>(kind)
  }

  /**
   * A kind's typed view, registered or not yet: a feature whose effects need the view (a delivery
   * that sends to its own actor) takes it before registering. Until then its calls throw UnknownKindError.
   */
  view<M extends AnyStateMachine>(kind: string): ActorKind<M> {
    return {
      kind,
      spawn: (id, input) => this.spawn(kind, id, input) as Promise<SnapshotFrom<M>>,
      send: (id, event, o) => this.send(kind, id, event, o) as Promise<SnapshotFrom<M>>,
      ask: (id, event, o) => this.ask(kind, id, event, o) as Promise<Asked<SnapshotFrom<M>>>,
      read: (id) => this.read(kind, id),
      settle: (id, timeoutMs, until) => this.settle(kind, id, timeoutMs, until),
      reach: (id, until, timeoutMs) => this.reach(kind, id, until, timeoutMs),
    }
  }

  /** Whether `kind` is registered here (the timer pump leaves other kinds to other instances). */
  hasKind(kind: string): boolean {
    return this.kinds.has(kind)
  }

  /** Opens the snapshot collection, resumes actors with pending work, starts timers and chores. */
  async start(): Promise<{ resumed: number }> {
    if (this.storage) return { resumed: 0 }
    this.handover.draining = false
    const { logger } = this.opts
    const storage = await openStorage({
      ...this.opts,
      queue: this.queue,
      leases: this.leases,
      scheduled: (at) => this.pump.nudge(at),
      transitioned: (t) => {
        for (const listener of this.transitionListeners) listener(t)
      },
      passivate: (reg, id) => void this.passivate(reg.kind, id).catch(() => {}),
    })
    await this.forwarder.start()
    await this.handover.listen()
    this.storage = storage
    // Stored outboxes first (resumePending hands them over), then the pending work.
    const resumed = await this.handover.resumePending()
    // The timers are an index of the stored deadlines, which may have been lost while this
    // instance was down (a Redis restarted empty): rebuilt, if so, before the pump claims from them.
    await this.timerRebuild.check(true)
    this.pump.start()
    this.keeper.start()
    logger.info({ resumed, instance: this.opts.instanceId }, 'actor runtime started')
    return { resumed }
  }

  /**
   * Stops timers and chores, lets queued work finish, stops every actor and releases its lease,
   * then tells the other instances, which resume what had pending work at once.
   */
  async stop(): Promise<void> {
    const residency = this.storage?.residency
    if (!residency) return
    // From here on nothing new is taken on (peerReleased, the orphan sweep).
    this.handover.draining = true
    await this.keeper.stop()
    await this.pump.stop()
    await this.queue.drain()
    const held = residency.size
    await residency.dropAll()
    await this.handover.stopListening()
    if (held > 0) await this.handover.announceReleased().catch((err: unknown) => this.opts.logger.warn({ err }, 'could not announce the released actors'))
    await this.forwarder.stop()
    this.storage = null
  }

  /** Emitted events stored in outboxes and not handed over, of actors no other instance holds (actors/outbox.ts). */
  private async deliverOutboxes(): Promise<void> {
    if (!this.storage) return
    await deliverOutboxes({ ...this.storage, kinds: [...this.kinds.values()], queue: this.queue, logger: this.opts.logger })
  }

  /**
   * Shutdown begins (SIGTERM): this instance claims no more durable timers and resumes no one
   * else's orphaned work; every idle actor is handed over now (its lease released, the others
   * told) and each busy one once its effect has run. Events keep reaching actors held here.
   */
  drain(): Promise<void> {
    return this.handover.drain()
  }

  /**
   * Hands over every live actor of `kind`, busy or not (stopping an actor stops its running
   * effects): for work its feature has already brought to a safe stop (a campaign's sender).
   */
  handOver(kind: string): Promise<number> {
    return this.handover.handOver(kind)
  }

  /** Actors busy right now (an effect in flight) in this process. */
  get busyCount(): number {
    return this.handover.busyCount
  }

  /** Creates and persists a new actor; ActorExistsError when the id is taken. */
  async spawn(kind: string, id: string, input: unknown): Promise<AnyMachineSnapshot> {
    const reg = this.registration(kind)
    const key = actorKey(kind, id)
    const residency = this.res()
    return this.queue.run(key, async () => {
      if (residency.get(key)) throw new ActorExistsError(`${key} exists`)
      if (!(await this.leases.take(key))) throw new ActorExistsError(`${key} is live on ${await this.leases.ownerOf(key)}`)
      if (await this.store().get(key)) {
        await this.leases.release(key)
        throw new ActorExistsError(`${key} exists`)
      }
      return residency.create(reg, id, key, input)
    })
  }

  /**
   * Delivers `event` to the actor (resuming it from its stored snapshot, or forwarding it to the
   * instance that holds it) and resolves with the snapshot once it is stored.
   */
  async send(kind: string, id: string, event: AnyEventObject, opts: SendOptions = {}): Promise<AnyMachineSnapshot> {
    return (await this.dispatcher.dispatch(this.registration(kind), id, event, opts.input, 0, false)).snapshot
  }

  /** Sends like `send`; answers whether the chart applied `event` or refused it, with this event's refusal (ask.ts). */
  async ask(kind: string, id: string, event: AnyEventObject, opts: SendOptions = {}): Promise<Asked> {
    const { snapshot, refusal } = await this.dispatcher.dispatch(this.registration(kind), id, event, opts.input, 0, true)
    return refusal ? { ok: false, refusal, snapshot } : { ok: true, snapshot }
  }

  /** The stored actor, without resuming it (null when it does not exist). */
  read(kind: string, id: string): Promise<ActorRecord | null> {
    return this.reads.read(kind, id)
  }

  /**
   * Waits until the stored snapshot records no effect in flight, then returns it: after `send`,
   * a route answers once the effect the event started has run and its outcome is stored. Reads
   * the store, so it works whichever instance holds the actor. ActorUnavailableError on timeout.
   */
  settle(kind: string, id: string, timeoutMs?: number, until?: SettledWhen): Promise<ActorRecord> {
    return this.reads.settle(kind, id, timeoutMs, until)
  }

  /** Waits until the snapshot shows what `until` waits for; the live one, unstored, where held here (settle.ts). */
  reach(kind: string, id: string, until: SettledWhen, timeoutMs?: number): Promise<SnapshotView> {
    return this.reads.reach(kind, id, until, timeoutMs)
  }

  list(kind: string, opts: { state?: string; limit?: number } = {}): Promise<ActorRecord[]> {
    return this.reads.list(kind, opts)
  }

  /**
   * Delivers every durable timer due at `now` (default: the clock's now), waits until the actors
   * it woke have settled (the effects those wake-ups started have run and are stored), and repeats
   * while that armed more timers already due — so "advance the manual clock, then read" sees the
   * outcome.
   */
  runDue(now?: number): Promise<number> {
    return this.dueRun.run(now)
  }

  /** Stops the actor and drops it from memory unless an effect is in flight; true when it was dropped. */
  passivate(kind: string, id: string): Promise<boolean> {
    const reg = this.registration(kind)
    const key = actorKey(kind, id)
    const residency = this.res()
    return this.queue.run(key, () => residency.passivate(reg, key))
  }

  /** Passivates every actor idle for at least its kind's idleMs (every idle one with `all`). */
  async passivateIdle(all = false): Promise<number> {
    const now = Date.now()
    const idle = this.res()
      .all()
      .filter((l) => all || isIdle(this.registration(l.kind), l.lastActiveAt, now))
    const done = await Promise.all(idle.map((l) => this.passivate(l.kind, l.id).catch(() => false)))
    return done.filter(Boolean).length
  }

  get liveCount(): number {
    return this.storage?.residency.size ?? 0
  }

  /** Actors held in memory here, by kind (every registered kind, 0 included). */
  liveByKind(): Map<string, number> {
    return this.introspection.liveByKind()
  }

  /** Unfinished actors passivated here since start, by kind (every registered kind, 0 included). */
  passivations(): Map<string, number> {
    return this.introspection.passivations()
  }

  /** Stored actors of `kind` in state `state` (a top-level state name), on every instance: an indexed count. */
  countInState(kind: string, state: string): Promise<number> {
    return this.introspection.countInState(kind, state)
  }

  /**
   * Hears every stored change of state value, of every kind, on the instance that stored it
   * (metrics count moves with it). Called synchronously in the actor's queue: keep it cheap; a
   * listener that throws is logged and the others still run. Returns the unsubscribe.
   */
  onTransition(listener: (t: Transition) => void): () => void {
    this.transitionListeners.push(listener)
    return () => {
      const i = this.transitionListeners.indexOf(listener)
      if (i >= 0) this.transitionListeners.splice(i, 1)
    }
  }

  isLive(kind: string, id: string): boolean {
    return this.storage?.residency.get(actorKey(kind, id)) !== undefined
  }

  /** Every registered machine, for `GET /console/machines`. */
  machineDefinitions(): MachineDefinition[] {
    return this.introspection.machineDefinitions()
  }

  /** One machine's definition for the visualiser (`GET /console/machines/{name}`), or null. */
  machineDefinition(name: string): MachineDefinition | null {
    return this.introspection.machineDefinition(name)
  }

  /**
   * State value, context, version and deadlines of one actor, by `(kind, id)` or by its full id
   * `kind:id` (`GET /console/actors/{id}`); null when there is no such actor.
   */
  describe(kindOrKey: string, id?: string): Promise<ActorDescription | null> {
    return this.introspection.describe(kindOrKey, id)
  }

  private registration(kind: string): Registration {
    const reg = this.kinds.get(kind)
    if (!reg) throw new UnknownKindError(`no actor kind ${kind} is registered`)
    return reg
  }

  private res(): Residency {
    return this.started().residency
  }

  private store(): SnapshotStore {
    return this.started().snapshots
  }

  private started(): Storage {
    if (!this.storage) throw new Error('actor runtime is not started')
    return this.storage
  }
}
