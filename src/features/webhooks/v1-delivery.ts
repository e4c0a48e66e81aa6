/**
 * v1 deliveries (docs/spec.md Events, delivery rules 1–2): each event is attempted once per subscribed
 * endpoint of its agent, signed, with no retry; the outcome goes to the endpoint's actor, whose
 * chart switches it off after five failures in a row.
 *
 * The bus runs `onEvent` on the instance that recorded the event; it only looks up subscribers and
 * owes one delivery per endpoint: a record (`v1_webhook_deliveries`, events/owed-work.ts) committed
 * with the event's `dispatched: true`, then a job in that endpoint's lane (lanes.ts), so publishing
 * never waits on a receiver, and a slow or dead receiver only ever delays its own deliveries. A job
 * re-reads the webhook and its actor before sending: an endpoint deleted, changed or switched off
 * meanwhile is honoured. A lane that is full fails the delivery at once (it counts toward the five).
 * The record goes once the attempt's outcome is reported.
 *
 * Crash semantics, at least once: a delivery still recorded when its instance died (queued behind a
 * slow endpoint, or in flight) is attempted again by the instance that takes the record over (the
 * next start of this one, or another within PRESENCE_TTL_MS), so a receiver may see an event it
 * already got, with the same `x-service-event-id`, when the process died between sending it and
 * reporting the answer. A fresh dispatch claims each (event, webhook) pair first (kept 24 h), so an
 * event dispatched twice is not attempted twice.
 *
 * Order: a delivery waits for the deliveries of its subject to the same webhook that were owed when
 * it was (subject-turns.ts), so a call's `call.completed` reaches a webhook before its `call.analysed`.
 * Which were owed is read from memory where the store is this process's alone (owed-keys.ts), else
 * from the store.
 */

import { type Clock, iso } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { crashPoint } from '../../crash-points'
import type { SecretBox } from '../../crypto/secrets'
import type { Owed, RecordedEvent } from '../../events/bus'
import { EVENT_DESCRIPTIONS, type EventType, isV1EventType, subjectOf } from '../../events/catalogue'
import type { OwedItem, OwedWork } from '../../events/owed-work'
import type { Logger } from '../../logger'
import type { Collection, IndexSpec } from '../../store/port'
import { type AttemptDeps, type AttemptOutcome, attempt } from './attempt'
import type { WebhookEndpointActors } from './endpoint-actor'
import { LaneFullError, type Lanes, LanesStoppedError } from './lanes'
import type { OwedKeys } from './owed-keys'
import { subscribes, type WebhookDoc, type WebhookRepos } from './repository'
import { signedHeaders, WEBHOOK_ID_HEADER } from './signing'
import { type SubjectTurns, turnKey } from './subject-turns'

// Not in docs/spec.md. Legacy endpoints default to 5 s (timeout_ms); v1 has no retry, so a slow but
// working receiver gets twice that before its one attempt counts as failed.
export const V1_TIMEOUT_MS = 10_000

export interface V1DeliveryDeps {
  repos: WebhookRepos
  endpoints: WebhookEndpointActors
  secrets: SecretBox
  clock: Clock
  lanes: Lanes
  attempt: AttemptDeps
  logger: Logger
  /** Remembers which (event, webhook) pairs a dispatch attempted, across restarts. */
  coordination: Pick<Coordination, 'idempotencyBegin'>
  /** The recorded events, for a delivery taken over from a stopped instance. */
  events: Pick<Collection<RecordedEvent>, 'get'>
  turns: SubjectTurns
  /** The deliveries owed here that wait their turn, by key. */
  index: OwedKeys
}

/** A delivery owed: one (event, webhook) pair, from dispatch until its outcome is reported. */
export interface OwedV1Delivery extends OwedItem {
  eventId: string
  webhookId: string
  createdAt: string
  /** The webhook and the event's subject (turnKey); absent for an event about nothing in particular. */
  key?: string
  /** Deliveries of the same key owed when this one was: it goes out after them (subject-turns.ts). */
  after?: string[]
}

/** A delivery owed, as its dispatch or its takeover hands it on: the same strings from there to done. */
type Owing = Pick<OwedV1Delivery, 'id' | 'webhookId' | 'key' | 'after'>

/** The index the owed deliveries of one (webhook, subject) are found by. */
export const OWED_V1_INDEXES: IndexSpec[] = [{ name: 'key', fields: [['key', 1]] }]

/**
 * The claim that keeps an event dispatched twice (a bus re-dispatch) from being attempted twice.
 * Re-dispatch happens within minutes of a restart; a day of memory is far beyond it.
 */
const ATTEMPT_CLAIM_TTL_MS = 24 * 60 * 60 * 1000

export const owedV1Id = (eventId: string, webhookId: string) => `v1d_${eventId.replace(/^evt_/, '')}_${webhookId}`

export class V1Deliveries {
  /** Set once the owed-work ledger is open (wiring.ts). */
  owed: OwedWork<OwedV1Delivery> | null = null

  constructor(private readonly deps: V1DeliveryDeps) {}

  /** Bus subscriber (local): owes one attempt per subscribed endpoint of the event's agent, queued once the bus recorded them. */
  readonly onEvent = async (event: RecordedEvent): Promise<Owed | undefined> => {
    if (!isV1EventType(event.type) || !event.agentId) return undefined
    const owed = this.owed!
    const hooks = (await this.deps.repos.webhooks.in(event.workspaceId).find({ agentId: event.agentId })).filter((hook) => subscribes(hook.events, event.type))
    if (hooks.length === 0) return undefined
    const createdAt = iso(this.deps.clock.now())
    const subject = subjectOf(event)
    const keyOf = (hook: WebhookDoc) => (subject ? turnKey(hook.id, subject) : undefined)
    const base = hooks.map((hook) => ({ id: owedV1Id(event.id, hook.id), webhookId: hook.id, key: keyOf(hook) }))
    const keyed = base.flatMap(({ id, key }) => (key ? [{ key, id }] : []))
    const earlier = await this.earlier(keyed, event.id)
    const items = base.map(({ id, webhookId, key }) => ({ id, eventId: event.id, webhookId, createdAt, ...(key ? { key, after: earlier.get(key) ?? [] } : {}) }))
    const { index, turns } = this.deps
    for (const { key, id } of keyed) index.add(id, key)
    return {
      writes: items.map((item) => owed.owe(item)),
      start: () => {
        for (const item of items) this.enqueue(item, event, false)
      },
      abandon: () => {
        for (const { key, id } of keyed) {
          index.delete(id, key)
          turns.forget(id)
        }
      },
    }
  }

  /**
   * The deliveries still owed under each key. Where this event's own is among them (dispatched
   * again), it keeps the list it was written with: the others came after it.
   */
  private async earlier(keyed: { key: string; id: string }[], eventId: string): Promise<Map<string, string[]>> {
    const byKey = new Map<string, string[]>()
    if (keyed.length === 0) return byKey
    const { index } = this.deps
    // Dispatched again while its deliveries are owed: the store has the lists they were written with.
    if (index.whole) {
      let again = false
      for (const { key, id } of keyed) {
        const owed = index.under(key)
        if (owed.includes(id)) again = true
        byKey.set(key, owed)
      }
      if (!again) return byKey
      byKey.clear()
    }
    const keys = keyed.map(({ key }) => key)
    const owed = (await this.owed!.items.find({ key: { $in: keys } })).filter((item) => item.key)
    const own = new Map(owed.filter((item) => item.eventId === eventId).map((item) => [item.key!, item.after ?? []]))
    for (const item of owed) {
      if (item.eventId === eventId || own.has(item.key!)) continue
      byKey.set(item.key!, [...(byKey.get(item.key!) ?? []), item.id])
    }
    for (const [key, after] of own) byKey.set(key, after)
    return byKey
  }

  /** A delivery taken over from a stopped instance (events/owed-work.ts): attempted even if it may have been sent. */
  readonly resume = async (item: OwedV1Delivery): Promise<void> => {
    if (item.key) this.deps.index.add(item.id, item.key)
    const event = await this.deps.events.get(item.eventId)
    if (!event) return this.done(item)
    this.enqueue(item, event, true)
  }

  private enqueue(item: Owing, event: RecordedEvent, resumed: boolean): void {
    const { lanes, turns, index } = this.deps
    const { webhookId: id, key, after = [] } = item
    const inTurn = async (): Promise<void> => {
      // Owed here (its dispatch still committing, or taken over and about to run): it starts soon.
      const stillOwed = async (other: string) => (index.whole ? index.has(other, key!) && ('here' as const) : (await this.owed!.items.get(other)) !== null)
      if (!(await turns.wait(after, stillOwed, () => lanes.isStopped))) throw new LanesStoppedError('deliveries are stopping')
      return lanes.run(`v1:${id}`, () => this.deliver(item, event, resumed))
    }
    const work = inTurn()
    // Tracked until the outcome is settled, a refusal's bookkeeping included: what follows it waits for that.
    turns.track(
      item.id,
      work.catch(async (err: unknown) => {
        // Shutting down: what was queued stays owed, for the instance that takes it over.
        if (err instanceof LanesStoppedError || this.deps.lanes.isStopped) return
        if (err instanceof LaneFullError) {
          await this.report(id, { ok: false, status: null, error: `not attempted: ${err.message} (it answers too slowly)` }).catch(() => {})
          return this.done(item).catch(() => {})
        }
        // Left owed: attempted again when this instance's work is taken over.
        this.deps.logger.error({ err, webhook: id, eventId: event.id }, 'v1 webhook delivery failed unexpectedly')
      }),
    )
  }

  /** Settled: the record goes, then its place in the index (a successor reading the index meanwhile waits on it as running). */
  private async done(item: Owing): Promise<void> {
    await this.owed!.done(item.id)
    if (item.key) this.deps.index.delete(item.id, item.key)
  }

  private async deliver(item: Owing, event: RecordedEvent, resumed: boolean): Promise<void> {
    const id = item.webhookId
    const hook = await this.deps.repos.webhooks.in(event.workspaceId).get(id)
    if (!hook || !subscribes(hook.events, event.type)) return this.done(item)
    const record = await this.deps.endpoints.read(id)
    if (record && record.state !== 'enabled') return this.done(item)
    const claim = await this.deps.coordination.idempotencyBegin(`v1-delivery:${event.id}:${id}`, ATTEMPT_CLAIM_TTL_MS)
    // A second dispatch of one event skips what the first attempted; a delivery taken over goes out
    // whatever the claim says: its instance may have died before sending it.
    if (claim.state !== 'started' && !resumed) return this.done(item)
    crashPoint('webhook.v1.attempting')
    const outcome = await attempt(targetOf(hook), this.request(hook, event), this.deps.attempt)
    try {
      await this.report(id, outcome)
    } finally {
      await this.done(item)
    }
  }

  private request(hook: WebhookDoc, event: RecordedEvent) {
    // Serialised once: the signature covers exactly these bytes.
    const body = JSON.stringify({ event: event.type, sentAt: iso(this.deps.clock.now()), data: event.data })
    const headers = signedHeaders({
      secret: this.deps.secrets.open(hook.secretSealed),
      body,
      eventId: event.id,
      eventType: event.type,
      extra: { [WEBHOOK_ID_HEADER]: hook.id },
    })
    return {
      body,
      headers,
      subject: `${event.type} (agent ${hook.agentId})`,
      summary: `${EVENT_DESCRIPTIONS[event.type as EventType]}. Event ${event.id} at ${event.createdAt}, agent ${hook.agentId}, webhook ${hook.id}.`,
      eventId: event.id,
      workspaceId: hook.workspaceId,
    }
  }

  private async report(id: string, outcome: AttemptOutcome): Promise<void> {
    const at = this.deps.clock.now()
    const event = outcome.ok
      ? { type: 'delivery.succeeded' as const, at, status: outcome.status ?? 0 }
      : { type: 'delivery.failed' as const, at, status: outcome.status, error: outcome.error ?? 'failed' }
    await this.deps.endpoints.send(id, event, { input: { id } })
  }
}

export const targetOf = (doc: { url: string; targetKind: 'url' | 'email' }) => (doc.targetKind === 'email' ? { kind: 'email' as const, address: doc.url } : { kind: 'url' as const, url: doc.url })
