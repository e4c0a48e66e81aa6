/**
 * v1 deliveries (docs/spec.md Events, delivery rules 1–2): each event is attempted once per subscribed
 * endpoint of its agent, signed, with no retry; the outcome goes to the endpoint's actor, whose
 * chart switches it off after five failures in a row.
 *
 * The bus runs `onEvent` on the instance that recorded the event; it only looks up subscribers and
 * queues one job per endpoint in that endpoint's lane (lanes.ts), so publishing never waits on a
 * receiver, and a slow or dead receiver only ever delays its own deliveries. A job re-reads the
 * webhook and its actor before sending: an endpoint deleted, changed or switched off meanwhile is
 * honoured. A lane that is full fails the delivery at once (it counts toward the five).
 *
 * Crash semantics: an event recorded but not yet dispatched is dispatched again after a restart
 * (bus.ts); the per-(event, webhook) claim in `deliver` makes that re-dispatch skip webhooks
 * already attempted, so a receiver sees an event at most once as long as the re-dispatch comes
 * within the claim's 24 h (an outage longer than that could repeat one; `x-service-event-id`
 * de-duplicates). Jobs queued in memory when the process dies are not re-attempted.
 */

import type { WebhookEndpointActors } from '../../../actors/webhook-endpoint'
import { type Clock, iso } from '../../clock'
import type { Coordination } from '../../coordination/port'
import type { SecretBox } from '../../crypto/secrets'
import type { RecordedEvent } from '../../events/bus'
import { EVENT_DESCRIPTIONS, type EventType, isV1EventType } from '../../events/catalogue'
import type { Logger } from '../../logger'
import { type AttemptDeps, type AttemptOutcome, attempt } from './attempt'
import { LaneFullError, type Lanes, LanesStoppedError } from './lanes'
import { subscribes, type WebhookDoc, type WebhookRepos } from './repository'
import { signedHeaders, WEBHOOK_ID_HEADER } from './signing'

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
  /** Remembers which (event, webhook) pairs were attempted, across restarts: at most once. */
  coordination: Pick<Coordination, 'idempotencyBegin'>
}

/**
 * v1 deliveries are one attempt, no retry (docs/spec.md Events rule 1). An event whose dispatch a crash
 * interrupted is dispatched again after the restart; the claim below makes that re-dispatch skip
 * every webhook already attempted, so a receiver never gets a v1 event twice (at most once: one
 * claimed but not sent when the process died is not sent). Re-dispatch happens within minutes of
 * a restart; a day of memory is far beyond it.
 */
const ATTEMPT_CLAIM_TTL_MS = 24 * 60 * 60 * 1000

export class V1Deliveries {
  constructor(private readonly deps: V1DeliveryDeps) {}

  /** Bus subscriber (local): queue one attempt per subscribed endpoint of the event's agent. */
  readonly onEvent = async (event: RecordedEvent): Promise<void> => {
    if (!isV1EventType(event.type) || !event.agentId) return
    const hooks = await this.deps.repos.webhooks.find({ workspaceId: event.workspaceId, agentId: event.agentId })
    for (const hook of hooks) if (subscribes(hook.events, event.type)) this.enqueue(hook.id, event)
  }

  private enqueue(id: string, event: RecordedEvent): void {
    this.deps.lanes
      .run(`v1:${id}`, () => this.deliver(id, event))
      .catch(async (err: unknown) => {
        // Shutting down: what was queued is dropped, and a late outcome has no runtime to go to.
        if (err instanceof LanesStoppedError || this.deps.lanes.isStopped) return
        if (err instanceof LaneFullError) {
          return this.report(id, { ok: false, status: null, error: `not attempted: ${err.message} (it answers too slowly)` }).catch(() => {})
        }
        this.deps.logger.error({ err, webhook: id, eventId: event.id }, 'v1 webhook delivery failed unexpectedly')
      })
  }

  private async deliver(id: string, event: RecordedEvent): Promise<void> {
    const hook = await this.deps.repos.webhooks.get(id)
    if (!hook || !subscribes(hook.events, event.type)) return
    const record = await this.deps.endpoints.read(id)
    if (record && record.state !== 'enabled') return
    const claim = await this.deps.coordination.idempotencyBegin(`v1-delivery:${event.id}:${id}`, ATTEMPT_CLAIM_TTL_MS)
    if (claim.state !== 'started') return
    const outcome = await attempt(targetOf(hook), this.request(hook, event), this.deps.attempt)
    await this.report(id, outcome)
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
