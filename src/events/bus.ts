/**
 * The event bus: every domain event is recorded once (with an id) and then fanned out.
 * - `local` subscribers run on the instance that published, after the record is stored; this is
 *   where work that must happen once goes (webhook deliveries), because exactly one instance
 *   dispatches each event.
 * - `cluster` subscribers run on every instance (through the coordination store's pub/sub: Redis
 *   when REDIS_URL is set), for fan-out that each instance needs (live streams, caches).
 * A subscriber that throws is logged and never stops the others or the publisher.
 *
 * No event is lost between being recorded and being dispatched: it is stored with
 * `dispatched: false` and marked `true` once every local subscriber has run, in the same commit as
 * the work they left owed (`Owed`: a v1 delivery queued behind a slow endpoint), so `dispatched`
 * means "delivered, or durably owed". Events left unmarked
 * (the process died in between) are dispatched again at start and by a periodic sweep, under a
 * per-event lease so two instances never dispatch the same event at once. Local subscribers must
 * therefore be idempotent per event id (legacy deliveries are keyed by it; v1 receivers get the
 * event id header to de-duplicate the rare repeat).
 *
 * An event that reports a write (a reply stored, a status changed) is recorded in the same store
 * commit as that write (`publishWith`): the events collection is the outbox, so a crash between the
 * write and the dispatch leaves an undispatched event to deliver, never a write without its event.
 */

import { type Clock, iso } from '../clock'
import type { Coordination } from '../coordination/port'
import { crashPoint } from '../crash-points'
import { newId } from '../ids'
import type { Logger } from '../logger'
import { type Collection, type CollectionSpec, type Doc, type DocumentStore, DuplicateKeyError, type Write } from '../store/port'
import { workspaceSpec } from '../store/workspace-scoped'
import type { EventType } from './catalogue'

export { EVENT_TYPES, type EventType } from './catalogue'

export interface DomainEvent {
  type: EventType
  /** The workspace the event happened in (a developer's own or a customer's). */
  workspaceId: string
  agentId: string | null
  data: Record<string, unknown>
}

export interface RecordedEvent extends DomainEvent {
  [field: string]: unknown
  id: string
  createdAt: string
  /** False from recording until every local subscriber ran; absent on events recorded before this flag existed. */
  dispatched?: boolean
}

/**
 * What a local subscriber owes for an event beyond what it did while it ran: `writes` (durable
 * records of work still to do, such as a webhook delivery waiting in an endpoint's lane) are
 * committed together with the event's `dispatched: true`, so the event is marked dispatched exactly
 * when that work is recorded; `start` starts the work once they are.
 */
export interface Owed {
  writes: Write[]
  /** Not `then`: an object with a `then` is a thenable, which await would call. */
  start?: () => void
  /** The writes were not committed (a subscriber failed, or the commit did): the next dispatch owes them anew. */
  abandon?: () => void
}

export type EventHandler = (event: RecordedEvent) => void | Owed | Promise<void> | Promise<Owed | undefined>

export const eventsSpec: CollectionSpec = workspaceSpec('events', [
  {
    name: 'workspace_type_created',
    fields: [
      ['workspaceId', 1],
      ['type', 1],
      ['createdAt', -1],
    ],
  },
  {
    name: 'undispatched',
    fields: [
      ['dispatched', 1],
      ['createdAt', 1],
    ],
  },
])

const CHANNEL = 'events'
// A dispatch is a store query and a few writes per subscriber (milliseconds); 60 s covers a
// stalled store many times over, while a crashed dispatcher's events wait at most this long.
export const DISPATCH_LEASE_MS = 60_000
// A crashed instance's undispatched events are picked up by the others within this long, for one
// indexed query when there are none (the runtime's orphan sweep uses the same period).
export const SWEEP_MS = 30_000
// An event another instance is dispatching is looked at this often until it is: its dispatch takes
// milliseconds (DISPATCH_LEASE_MS above), so a few looks at most.
const REPUBLISH_POLL_MS = 50
// Re-dispatch reads this many undispatched events per query: a bounded read per round.
const REDISPATCH_BATCH = 100
// A local subscriber failing (store hiccup) leaves the event for the sweep; after this many
// dispatches that failed, a subscriber bug is assumed and the event is marked done with the error,
// so one bad event is not retried forever (5 sweeps ≈ 2.5 min of transient failure ridden out).
const MAX_DISPATCH_ATTEMPTS = 5

export class EventBus {
  private readonly local: EventHandler[] = []
  private readonly cluster: EventHandler[] = []
  private unsubscribe: (() => Promise<void>) | null = null
  private sweeper: ReturnType<typeof setInterval> | null = null
  private sweeping: Promise<number> | null = null
  /** Dispatches running in this process, by event id. */
  private readonly dispatching = new Map<string, Promise<boolean>>()

  private constructor(
    readonly events: Collection<RecordedEvent>,
    private readonly store: DocumentStore,
    private readonly coordination: Coordination,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly instanceId: string,
  ) {}

  static async open(store: DocumentStore, coordination: Coordination, clock: Clock, logger: Logger, instanceId = `bus_${newId('i')}`): Promise<EventBus> {
    const bus = new EventBus(await store.collection<RecordedEvent>(eventsSpec), store, coordination, clock, logger, instanceId)
    if (!store.atomic)
      logger.warn('the MongoDB server takes no transactions (not a replica set): a crash between a write and its event can lose the event; run MongoDB as a replica set (one member will do)')
    bus.unsubscribe = await coordination.subscribe(CHANNEL, (message) => bus.onClusterMessage(message))
    return bus
  }

  subscribe(handler: EventHandler, scope: 'local' | 'cluster' = 'local'): () => void {
    const list = scope === 'local' ? this.local : this.cluster
    list.push(handler)
    return () => {
      const i = list.indexOf(handler)
      if (i >= 0) list.splice(i, 1)
    }
  }

  /**
   * Records the event, then runs local subscribers (awaited), marks it dispatched and tells every
   * instance. With `opts.id` (an actor's emitted event: actors/types.ts `emitted`) publishing is
   * idempotent: an id already recorded is not recorded or dispatched again, so a hand-over repeated
   * after a crash publishes once. One recorded and left undispatched (the crash came between) is
   * dispatched before this resolves, here or by whoever holds it: the actor's next event must not
   * be dispatched before it (webhook order, docs/api/webhooks.md).
   */
  async publish(event: DomainEvent, opts: { id?: string } = {}): Promise<RecordedEvent> {
    const recorded = this.stamp(event, opts.id)
    // Held from before the record exists, so a sweep on another instance never takes it mid-dispatch.
    const leased = await this.lease(recorded.id)
    try {
      await this.events.insert(recorded)
    } catch (err) {
      if (!(err instanceof DuplicateKeyError) || opts.id === undefined) throw err
      return this.recordedBefore(recorded, leased)
    }
    crashPoint('event.recorded')
    await this.dispatch(recorded)
    crashPoint('event.dispatched')
    crashPoint(`event.dispatched:${event.type}`)
    return recorded
  }

  /** An event published again by id: dispatched now if it never was (under our lease), or once its dispatcher is done. */
  private async recordedBefore(fresh: RecordedEvent, leased: boolean): Promise<RecordedEvent> {
    // Being dispatched in this process (the lease is ours either way): wait for that one.
    const here = this.dispatching.get(fresh.id)
    if (here) await here.catch(() => {})
    const stored = await this.events.get(fresh.id)
    if (stored?.dispatched !== false) {
      if (leased) await this.coordination.releaseLease(`event:${fresh.id}`, this.instanceId).catch(() => {})
      return stored ?? fresh
    }
    if (leased) {
      await this.dispatch(stored)
      return { ...stored, dispatched: true }
    }
    // Another instance's sweep holds it: its dispatch is a few store writes, and its lease bounds it.
    const deadline = Date.now() + DISPATCH_LEASE_MS
    for (;;) {
      const now = await this.events.get(fresh.id)
      if (now?.dispatched !== false || Date.now() >= deadline) return now ?? stored
      await new Promise((done) => setTimeout(done, REPUBLISH_POLL_MS))
    }
  }

  /**
   * Applies `writes` and records the event in one store commit (all or none: DocumentStore.commit),
   * then dispatches it as `publish` does. Resolves to the event and each write's result. A crash
   * after the commit leaves the event recorded and undispatched; `start()` or the sweep delivers it.
   */
  async publishWith(event: DomainEvent, writes: Write[]): Promise<{ event: RecordedEvent; results: (Doc | null)[] }> {
    const recorded = this.stamp(event)
    await this.lease(recorded.id)
    let results: (Doc | null)[]
    try {
      results = (await this.store.commit([...writes, { collection: this.events.name, op: 'insert', doc: recorded }])).slice(0, writes.length)
    } catch (err) {
      await this.coordination.releaseLease(`event:${recorded.id}`, this.instanceId).catch(() => {})
      throw err
    }
    // Between the write and its delivery: where an event used to be lost (test/e2e/event-outbox-crash.test.ts).
    crashPoint('event.recorded')
    crashPoint(`event.recorded:${event.type}`)
    await this.dispatch(recorded)
    crashPoint('event.dispatched')
    crashPoint(`event.dispatched:${event.type}`)
    return { event: recorded, results }
  }

  /**
   * Records the event without dispatching it: the state a crash right after the insert leaves
   * behind. `start()` or the sweep dispatches it later. For crash tests and tools.
   */
  async record(event: DomainEvent): Promise<RecordedEvent> {
    const recorded = this.stamp(event)
    await this.events.insert(recorded)
    return recorded
  }

  /**
   * Dispatches what a crash left undispatched, then keeps sweeping for events a crashed instance
   * left behind. Call once every local subscriber is registered (and the actor runtime started).
   */
  async start(): Promise<number> {
    const count = await this.redispatch()
    if (!this.sweeper) {
      this.sweeper = setInterval(() => void this.redispatch().catch((err) => this.logger.error({ err }, 'event re-dispatch sweep failed')), SWEEP_MS)
      this.sweeper.unref?.()
    }
    return count
  }

  /** Dispatches every recorded-but-undispatched event nobody else is dispatching; returns how many. */
  redispatch(): Promise<number> {
    // One sweep at a time per instance: a second caller waits for the running one.
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = null))
    return this.sweeping
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
    await this.sweeping?.catch(() => {})
    await this.unsubscribe?.()
  }

  private stamp(event: DomainEvent, id?: string): RecordedEvent {
    return { ...event, id: id ?? newId('evt'), createdAt: iso(this.clock.now()), dispatched: false }
  }

  private lease(id: string): Promise<boolean> {
    return this.coordination.acquireLease(`event:${id}`, this.instanceId, DISPATCH_LEASE_MS)
  }

  /** Runs the local subscribers; marks the event dispatched unless one failed (then the sweep retries it). */
  private dispatch(recorded: RecordedEvent): Promise<boolean> {
    const running = this.dispatchNow(recorded).finally(() => this.dispatching.delete(recorded.id))
    this.dispatching.set(recorded.id, running)
    return running
  }

  private async dispatchNow(recorded: RecordedEvent): Promise<boolean> {
    let failures: string[]
    let owed: Owed[]
    try {
      ;({ failures, owed } = await this.run(this.local, recorded))
      const attempts = (typeof recorded.dispatchAttempts === 'number' ? recorded.dispatchAttempts : 0) + 1
      if (failures.length > 0 && attempts < MAX_DISPATCH_ATTEMPTS) {
        // What the subscribers owed is not recorded: the next dispatch runs them again and owes it anew.
        abandon(owed)
        await this.events.update(recorded.id, { dispatchAttempts: attempts })
        return false
      }
      const set = failures.length ? { dispatched: true, dispatchError: failures.join('; ') } : { dispatched: true }
      const writes = owed.flatMap((o) => o.writes)
      if (writes.length === 0) await this.events.update(recorded.id, set)
      else
        await this.store.commit([...writes, { collection: this.events.name, op: 'update', id: recorded.id, set }]).catch((err: unknown) => {
          abandon(owed)
          throw err
        })
    } finally {
      await this.coordination.releaseLease(`event:${recorded.id}`, this.instanceId).catch(() => {})
    }
    for (const o of owed) {
      try {
        o.start?.()
      } catch (err) {
        this.logger.error({ err, eventId: recorded.id }, 'owed work did not start (it is resumed with its instance)')
      }
    }
    const { dispatchAttempts: _a, dispatchError: _e, ...rest } = recorded
    const wire: RecordedEvent = { ...rest, dispatched: true }
    await this.coordination.publish(CHANNEL, JSON.stringify(wire)).catch((err) => {
      this.logger.warn({ err, eventId: recorded.id }, 'event not fanned out to other instances')
    })
    return failures.length === 0
  }

  private async sweep(): Promise<number> {
    let done = 0
    const skipped = new Set<string>()
    for (;;) {
      const batch = (await this.events.find({ dispatched: false }, { sort: [['createdAt', 1]], limit: REDISPATCH_BATCH + skipped.size })).filter((e) => !skipped.has(e.id)).slice(0, REDISPATCH_BATCH)
      if (batch.length === 0) return done
      for (const event of batch) {
        if (!(await this.lease(event.id))) {
          skipped.add(event.id) // being dispatched elsewhere right now
          continue
        }
        // Re-read under the lease: its dispatcher may have finished between our query and the lease.
        const current = await this.events.get(event.id)
        if (current?.dispatched !== false) {
          await this.coordination.releaseLease(`event:${event.id}`, this.instanceId).catch(() => {})
          skipped.add(event.id)
          continue
        }
        this.logger.info({ eventId: event.id, type: event.type }, 'dispatching an event left undispatched')
        // At most once per sweep, whatever the outcome: a failing one waits for the next sweep.
        skipped.add(event.id)
        if (await this.dispatch(current)) done++
      }
    }
  }

  private async onClusterMessage(message: string): Promise<void> {
    // Nobody here listens to the whole cluster's events: no need to read them (three a call).
    if (this.cluster.length === 0) return
    let event: RecordedEvent
    try {
      event = JSON.parse(message)
    } catch {
      return
    }
    await this.run(this.cluster, event)
  }

  /** Runs every handler; returns the failures' messages (none stops the others) and what they owe. */
  private async run(handlers: EventHandler[], event: RecordedEvent): Promise<{ failures: string[]; owed: Owed[] }> {
    const failures: string[] = []
    const owed: Owed[] = []
    for (const handler of [...handlers]) {
      try {
        const left: Owed | undefined = (await handler(event)) ?? undefined
        if (left) owed.push(left)
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err))
        this.logger.error({ err, eventId: event.id, type: event.type }, 'event subscriber failed')
      }
    }
    return { failures, owed }
  }
}

function abandon(owed: Owed[]): void {
  for (const o of owed) o.abandon?.()
}
