/**
 * Builds the webhooks feature: v1 webhooks and legacy endpoints, their two actor kinds (registered
 * here, before the runtime starts), the bus subscribers that deliver, and the clean-ups other features trigger (agent deleted, customer deleted).
 */

import type { ActorRuntime } from '../../../actors/runtime'
import type { Clock } from '../../clock'
import type { Config } from '../../config'
import type { Coordination } from '../../coordination/port'
import { SecretBox } from '../../crypto/secrets'
import type { EventBus } from '../../events/bus'
import { OwedWork } from '../../events/owed-work'
import type { Logger } from '../../logger'
import type { Metrics } from '../../metrics/metrics'
import { createEmailSender, type OutboxRepo, openOutbox } from '../../providers/email'
import type { DocumentStore } from '../../store/port'
import type { AgentService } from '../agents/public'
import type { NotificationService } from '../notifications/public'
import { webhookDeliveryKind } from './delivery-actor'
import { webhookEndpointKind } from './endpoint-actor'
import { Lanes } from './lanes'
import { LegacyDeliveries } from './legacy-delivery'
import { LegacyWebhookService } from './legacy-service'
import { OwedKeys } from './owed-keys'
import { openWebhookRepos } from './repository'
import { WebhookService } from './service'
import { SubjectTurns } from './subject-turns'
import { switchedOffNotice } from './switched-off-notice'
import { OWED_V1_INDEXES, type OwedV1Delivery, V1_TIMEOUT_MS, V1Deliveries } from './v1-delivery'

// Deliveries in flight per endpoint. A receiver behind one small server handles a few requests at
// once; 16 lets a 100 ms receiver take ~160 deliveries/s, while a hung one ties up at most 16
// sockets until its timeout.
export const LANE_CONCURRENCY = 16
// Waiting per endpoint beyond those: twice bench:webhooks' burst (10,000 events in ~1.5 s, faster
// than any receiver drains them), so a healthy endpoint never overflows in a burst. An entry is a
// few hundred bytes (the event itself is shared by every endpoint), so a full queue is a few MB.
// A dead v1 endpoint is switched off after five failures and its queue then drains at once.
export const LANE_MAX_QUEUED = 20_000
// On shutdown, running attempts get this long to finish before the process moves on; queued ones
// are left to be taken over (legacy ones by their pending actors, v1 ones by their owed records).
const STOP_GRACE_MS = 2_000

export interface WebhooksFeature {
  webhooks: WebhookService
  legacyWebhooks: LegacyWebhookService
  /** Switches off every webhook of a (deleted) customer workspace: both surfaces. */
  switchOffCustomerWebhooks(workspaceId: string, at: number): Promise<void>
  /** Erases every webhook of an erased customer workspace, with secrets and delivery records. Idempotent. */
  eraseCustomerWebhooks(workspaceId: string): Promise<void>
  /** Emails kept when no SMTP_URL is set (GET /console/outbox). */
  outbox: OutboxRepo
  /** Takes over v1 deliveries that stopped instances (this one's earlier lives included) owed. */
  start(): Promise<void>
  /** Draining: take over no other instance's deliveries. */
  drain(): void
  stop(): Promise<void>
}

export interface WebhooksDeps {
  config: Config
  store: DocumentStore
  clock: Clock
  logger: Logger
  bus: EventBus
  runtime: ActorRuntime
  agents: AgentService
  coordination: Coordination
  /** Where a switched-off endpoint is reported to its developer. */
  notifications: NotificationService
  /** Counts delivery attempts by surface and result; none in some tests. */
  metrics?: Pick<Metrics, 'webhookDeliveries'>
}

export async function buildWebhooksFeature(deps: WebhooksDeps): Promise<WebhooksFeature> {
  const { config, store, clock, logger, bus, runtime, agents } = deps
  if (!config.secretKey) throw new Error('SECRET_KEY is required to seal webhook secrets (startServer provides one)')
  const secrets = new SecretBox(config.secretKey)
  const repos = await openWebhookRepos(store)
  const outbox = await openOutbox(store)
  const email = createEmailSender(config, V1_TIMEOUT_MS, { repo: outbox, clock })
  const lanes = new Lanes({ concurrency: LANE_CONCURRENCY, maxQueued: LANE_MAX_QUEUED })
  const turns = new SubjectTurns()
  const index = new OwedKeys()
  const allowPrivate = config.allowPrivateWebhookTargets
  const counted = (surface: 'v1' | 'legacy') => (outcome: { ok: boolean }) => deps.metrics?.webhookDeliveries.inc({ surface, result: outcome.ok ? 'delivered' : 'failed' })

  const endpoints = webhookEndpointKind.register(runtime, switchedOffNotice({ repos, notifications: deps.notifications }))
  // The deliveries spawn the actors whose effect they are: the kind's view first, registered after.
  const deliveryActors = webhookDeliveryKind.actors(runtime)
  const legacy = new LegacyDeliveries({
    repos,
    events: bus.events,
    deliveries: deliveryActors,
    secrets,
    clock,
    lanes,
    attempt: { allowPrivate, email, counted: counted('legacy') },
    agentNumber: (agentId) => agents.legacyNumberOfId(agentId),
    turns,
  })
  webhookDeliveryKind.register(runtime, legacy)
  const v1 = new V1Deliveries({
    repos,
    endpoints,
    secrets,
    clock,
    lanes,
    attempt: { allowPrivate, timeoutMs: V1_TIMEOUT_MS, email, counted: counted('v1') },
    logger,
    coordination: deps.coordination,
    events: bus.events,
    turns,
    index,
  })
  const owedV1 = await OwedWork.open<OwedV1Delivery>(store, {
    name: 'v1_webhook_deliveries',
    owner: runtime.instanceId,
    coordination: deps.coordination,
    logger,
    indexes: OWED_V1_INDEXES,
    resume: v1.resume,
  })
  v1.owed = owedV1
  bus.subscribe(v1.onEvent)
  bus.subscribe(legacy.onEvent)

  const webhooks = new WebhookService({ repos, agents, endpoints, secrets, clock, rules: { allowPrivate } })
  const legacyWebhooks = new LegacyWebhookService({ repos, agents, deliveries: deliveryActors, secrets, clock, allowPrivate })
  agents.onDelete(async (agent) => {
    await webhooks.removeAllForAgent(agent.workspaceId, agent.id)
    for (const ep of await repos.endpoints.in(agent.workspaceId).find({ agentId: agent.id })) await legacyWebhooks.remove(agent.workspaceId, ep.number)
  })

  return {
    outbox,
    webhooks,
    legacyWebhooks,
    async switchOffCustomerWebhooks(workspaceId, at) {
      await webhooks.switchOffWorkspace(workspaceId, at)
      const endpoints = repos.endpoints.in(workspaceId)
      for (const ep of await endpoints.find({ isActive: true })) await endpoints.update(ep.id, { isActive: false })
    },
    async eraseCustomerWebhooks(workspaceId) {
      await repos.webhooks.in(workspaceId).deleteMany()
      const endpoints = repos.endpoints.in(workspaceId)
      for (const ep of await endpoints.find()) await repos.deliveries.deleteMany({ endpointId: ep.id })
      await endpoints.deleteMany()
      await repos.endpointNumbers.in(workspaceId).deleteMany()
      await outbox.deleteMany({ workspaceId })
    },
    async start() {
      await owedV1.start()
      // The boot's takeover is done: where no other process writes this store, every delivery owed
      // is now this instance's, each in the index, and no other owner can appear.
      const alone = store.kind === 'sqlite' && config.sqliteLocking === 'exclusive'
      if (alone && (await owedV1.items.findOne({ owner: { $ne: runtime.instanceId } })) === null) index.markWhole()
    },
    drain: () => owedV1.drain(),
    async stop() {
      await lanes.stop(STOP_GRACE_MS)
      await owedV1.stop()
      await email.close()
    },
  }
}
