/**
 * Legacy deliveries (docs/spec.md "Webhook delivery (legacy)"): for each event, one delivery record per
 * matching active endpoint of the workspace (its `event_types` lists the type; its `agent_id` is
 * null or the event's agent), each driven by its own `webhookDelivery` actor: pending → success,
 * or retrying on a durable backoff timer, or failed once max_retries + 1 attempts are used.
 *
 * `onEvent` is idempotent per event: the delivery id is derived from the event id and the
 * endpoint, so the bus dispatching an event again after a crash creates nothing twice and loses
 * nothing. `deliver` is the chart's effect: one signed attempt in the endpoint's lane.
 *
 * Legacy body (not shown in docs/spec.md; ours): `{ id, event_type, created_at, agent_id, data }`,
 * signed like v1 (`x-service-signature: sha256=<hex>` over the raw body), with the event id,
 * delivery id and attempt number in headers (`x-service-event-id`, `x-service-delivery-id`,
 * `x-service-delivery-attempt`).
 *
 * Order: a delivery waits, before its first attempt, until the deliveries of its subject to the
 * same endpoint queued before it are settled (success or failed, not pending or retrying), so a
 * later event of a call never overtakes an earlier one that is being retried (subject-turns.ts).
 */
import { ActorExistsError } from '../../../actors/errors'
import type { DeliverInput, DeliverOutput } from '../../../machines/webhook-delivery'
import { type Clock, iso } from '../../clock'
import { crashPoint } from '../../crash-points'
import type { SecretBox } from '../../crypto/secrets'
import type { RecordedEvent } from '../../events/bus'
import { EVENT_DESCRIPTIONS, type EventType, isLegacyEventType, subjectOf } from '../../events/catalogue'
import type { Collection } from '../../store/port'
import { DuplicateKeyError } from '../../store/port'
import { type AttemptDeps, attempt } from './attempt'
import type { WebhookDeliveryActors } from './delivery-actor'
import { LaneFullError, type Lanes, LanesStoppedError } from './lanes'
import type { LegacyEndpointDoc, WebhookRepos } from './repository'
import { DELIVERY_ATTEMPT_HEADER, DELIVERY_ID_HEADER, signedHeaders } from './signing'
import type { SubjectTurns } from './subject-turns'

export interface LegacyDeliveryDeps {
  repos: WebhookRepos
  events: Collection<RecordedEvent>
  deliveries: WebhookDeliveryActors
  secrets: SecretBox
  clock: Clock
  lanes: Lanes
  attempt: Omit<AttemptDeps, 'timeoutMs'>
  /** The legacy integer id an agent id was given (payloads name agents as the legacy surface does). */
  agentNumber: (agentId: string) => Promise<number | null>
  turns: SubjectTurns
}

/** One delivery per (event, endpoint): the same event dispatched twice maps to the same id. */
export const deliveryIdOf = (eventId: string, endpointNumber: number): string => `dlv_${eventId.replace(/^evt_/, '')}_${endpointNumber}`

export class LegacyDeliveries {
  constructor(private readonly deps: LegacyDeliveryDeps) {}

  /** Bus subscriber (local): a delivery record and actor per matching endpoint. */
  readonly onEvent = async (event: RecordedEvent): Promise<void> => {
    if (!isLegacyEventType(event.type)) return
    const endpoints = await this.deps.repos.endpoints.in(event.workspaceId).find({ isActive: true })
    for (const endpoint of endpoints) {
      if (!endpoint.eventTypes.includes(event.type)) continue
      if (endpoint.agentId !== null && endpoint.agentId !== event.agentId) continue
      await this.queue(event, endpoint)
    }
  }

  /** The chart's `deliver` effect: one attempt, as an outcome (never a throw for a failed delivery). */
  readonly deliver = async (input: DeliverInput): Promise<DeliverOutput> => {
    const { repos, clock } = this.deps
    const final = (error: string): DeliverOutput => ({ ok: false, at: clock.now(), status: null, error, retryable: false })
    const queued = await repos.deliveries.get(input.deliveryId)
    const after = queued?.after ?? []
    // Shutting down while it waits its turn: never settle, as below, so it is taken again after the restart.
    if (after.length > 0 && !(await this.deps.turns.wait(after, this.unsettled, () => this.deps.lanes.isStopped))) return new Promise<never>(() => {})
    const doc = after.length > 0 ? await repos.deliveries.get(input.deliveryId) : queued
    if (!doc) return final('the delivery record was deleted with its endpoint')
    const endpoint = await repos.endpoints.in(doc.workspaceId).get(doc.endpointId)
    if (!endpoint) return final('the endpoint was deleted')
    if (!endpoint.isActive) return final('the endpoint is inactive (is_active: false)')
    // A success already recorded (the process died before the chart heard of it): report it, send nothing.
    if (typeof doc.succeededAt === 'number') return { ok: true, at: doc.succeededAt, status: doc.succeededStatus ?? null, error: null, retryable: true, attempt: doc.lastAttempt }
    const event = await this.deps.events.get(doc.eventId)
    if (!event) return final(`event ${doc.eventId} is no longer stored`)
    try {
      return await this.deps.turns.track(
        doc.id,
        this.deps.lanes.run(`legacy:${endpoint.id}`, async () => {
          // Claimed in the store before the request leaves: an attempt re-made after a crash goes out
          // as the next number, never again as one that may have been sent.
          const base = (doc.claimedRound ?? 0) === input.round ? (doc.lastAttempt ?? 0) : 0
          const attemptNo = Math.max(input.attempt, base + 1)
          await repos.deliveries.update(doc.id, { lastAttempt: attemptNo, claimedRound: input.round })
          crashPoint('delivery.claimed')
          const outcome = await attempt({ kind: 'url', url: endpoint.url }, await this.request(endpoint, event, doc.id, attemptNo), {
            ...this.deps.attempt,
            timeoutMs: endpoint.timeoutMs,
          })
          crashPoint('delivery.answered')
          const at = clock.now()
          if (outcome.ok) {
            await repos.deliveries.update(doc.id, { succeededAt: at, succeededStatus: outcome.status })
            crashPoint('delivery.succeeded')
          }
          return { ...outcome, at, retryable: true, attempt: attemptNo }
        }),
      )
    } catch (err) {
      if (err instanceof LaneFullError) return { ok: false, at: clock.now(), status: null, error: `not attempted: ${err.message}`, retryable: true }
      // Shutting down: never settle, so the chart stays pending (as stored) and the attempt is
      // made after the restart instead of being recorded as a failure.
      if (err instanceof LanesStoppedError) return new Promise<never>(() => {})
      throw err
    }
  }

  /** Whether a delivery is still to settle: neither succeeded nor failed for good (a POST retry makes it so again). */
  private readonly unsettled = async (id: string): Promise<boolean> => {
    const doc = await this.deps.repos.deliveries.get(id)
    if (!doc || typeof doc.succeededAt === 'number') return false
    const state = (await this.deps.deliveries.read(id))?.state ?? 'pending'
    return state === 'pending' || state === 'retrying'
  }

  private async queue(event: RecordedEvent, endpoint: LegacyEndpointDoc): Promise<void> {
    const id = deliveryIdOf(event.id, endpoint.number)
    const subject = subjectOf(event)
    const doc = {
      id,
      workspaceId: event.workspaceId,
      endpointId: endpoint.id,
      eventId: event.id,
      eventType: event.type,
      createdAt: iso(this.deps.clock.now()),
      ...(subject ? { subject, after: await this.before(endpoint.id, subject, id) } : {}),
    }
    try {
      await this.deps.repos.deliveries.insert(doc)
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err
    }
    crashPoint('delivery.queued')
    try {
      await this.deps.deliveries.spawn(id, { id, maxRetries: endpoint.maxRetries })
    } catch (err) {
      if (!(err instanceof ActorExistsError)) throw err
    }
  }

  /** The deliveries of (endpoint, subject) queued before `id` and not settled yet. */
  private async before(endpointId: string, subject: string, id: string): Promise<string[]> {
    const earlier = (await this.deps.repos.deliveries.find({ endpointId, subject, succeededAt: null })).filter((d) => d.id !== id)
    const open = await Promise.all(earlier.map((d) => this.unsettled(d.id)))
    return earlier.filter((_, i) => open[i]).map((d) => d.id)
  }

  private async request(endpoint: LegacyEndpointDoc, event: RecordedEvent, deliveryId: string, attemptNo: number) {
    const agentNumber = event.agentId ? await this.deps.agentNumber(event.agentId) : null
    const body = JSON.stringify({ id: event.id, event_type: event.type, created_at: event.createdAt, agent_id: agentNumber, data: event.data })
    const headers = signedHeaders({
      secret: this.deps.secrets.open(endpoint.secretSealed),
      body,
      eventId: event.id,
      eventType: event.type,
      extra: { [DELIVERY_ID_HEADER]: deliveryId, [DELIVERY_ATTEMPT_HEADER]: String(attemptNo) },
    })
    return { body, headers, subject: event.type, summary: EVENT_DESCRIPTIONS[event.type as EventType], eventId: event.id, workspaceId: event.workspaceId }
  }
}
