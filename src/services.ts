/**
 * Builds every service from config: store, coordination, clock, then the features on top.
 * One place that knows the wiring; features only know their own ports.
 */
import { ManualClock, systemClock, type Clock } from './clock'
import type { Config } from './config'
import type { Logger } from './logger'
import { openStore } from './store'
import type { DocumentStore } from './store/port'
import { openCoordination } from './coordination'
import type { Coordination } from './coordination/port'
import { openWorkspaces } from './features/workspaces/repository'
import { observeWrites } from './store/observe'
import { WorkspaceService } from './features/workspaces/service'
import { WorkspaceResolver } from './features/workspaces/resolver'
import { openApiKeys } from './features/keys/repository'
import { KeyService } from './features/keys/service'
import { CustomerService } from './features/customers/service'
import { CustomerLifecycleHooks } from './features/customers/lifecycle-hooks'
import { CustomerLifecycleEffects } from './features/customers/lifecycle-effects'
import { CustomerErasure } from './features/customers/erasure'
import { CustomerLifecycle } from './features/customers/lifecycle'
import { registerCustomerWorkspace } from '../actors/customer-workspace'
import { openAgents } from './features/agents/repository'
import { AgentService } from './features/agents/service'
import { AgentNumbers } from './features/agents/agent-numbers'
import { openPhoneNumbers } from './features/phone-numbers/repository'
import { PhoneNumberService } from './features/phone-numbers/service'
import { openContacts } from './features/contacts/repository'
import { ContactService } from './features/contacts/service'
import { UsageLedger } from './features/usage/ledger'
import type { ClockControl } from './features/clock/console'
import { EventBus } from './events/bus'
import { ActorRuntime, createInspection, type Inspection } from '../actors'
import { randomId } from './ids'
import { KnowledgeService } from './features/knowledge/service'
import { syncKnowledgeAcrossInstances } from './features/knowledge/sync'
import { buildConversationFeature, type ConversationFeature } from './features/conversations/wiring'
import { AnalyticsService } from './features/analytics/service'
import { buildVersionsFeature, type VersionsFeature } from './features/versions/wiring'
import { buildWebhooksFeature, type WebhooksFeature } from './features/webhooks/wiring'

export interface Services {
  config: Config
  logger: Logger
  clock: Clock
  store: DocumentStore
  coordination: Coordination
  workspaces: WorkspaceService
  resolver: WorkspaceResolver
  keys: KeyService
  customers: CustomerService
  /** Customer delete / restore / erase as moves of the customer-workspace actor. */
  customerLifecycle: CustomerLifecycle
  /** Where features subscribe what a customer's delete, restore or erasure must also do. */
  customerHooks: CustomerLifecycleHooks
  agents: AgentService
  numbers: PhoneNumberService
  contacts: ContactService
  ledger: UsageLedger
  bus: EventBus
  runtime: ActorRuntime
  inspection: Inspection | null
  knowledge: KnowledgeService
  /** Conversations, the engine, its model resolver and test chat. */
  conversations: ConversationFeature['conversations']
  models: ConversationFeature['models']
  engine: ConversationFeature['engine']
  testChat: ConversationFeature['testChat']
  analytics: AnalyticsService
  /** Agent versions (legacy surface): publish, checkpoint, rollback, diffs. */
  versions: VersionsFeature['versions']
  /** The published agent live web chat and voice must use (never the draft). */
  serving: VersionsFeature['serving']
  /** v1 webhooks, legacy webhook endpoints and deliveries. */
  webhooks: WebhooksFeature['webhooks']
  legacyWebhooks: WebhooksFeature['legacyWebhooks']
  /** What the service told developers (SPEC.md Events rule 8). */
  notifications: WebhooksFeature['notifications']
  /** Emails kept instead of sent when no SMTP_URL is set. */
  outbox: WebhooksFeature['outbox']
  clockControl: ClockControl
  /** Work to run after the manual clock moves (durable timers register here). */
  onClockAdvance: ((now: number) => Promise<void>)[]
  close(): Promise<void>
}

interface SettingDoc {
  [field: string]: unknown
  id: string
  value: unknown
}

/** The manual clock survives restarts, so a restarted test server does not travel back in time. */
async function openClock(config: Config, store: DocumentStore): Promise<{ clock: Clock; persist: (now: number) => Promise<void> }> {
  if (config.clock === 'system') return { clock: systemClock, persist: async () => {} }
  const settings = await store.collection<SettingDoc>({ name: 'settings', indexes: [] })
  const saved = await settings.get('manual-clock')
  const clock = new ManualClock(typeof saved?.value === 'number' ? saved.value : Date.now())
  const persist = (now: number) => settings.upsert({ id: 'manual-clock', value: now })
  await persist(clock.now())
  return { clock, persist }
}

/** The default model for new agents: `local` unless the service has an OpenAI key of its own. */
const defaultModel = (config: Config): string => (config.providers.openaiApiKey ? 'gpt-4o-mini' : 'local')

export async function buildServices(config: Config, logger: Logger): Promise<Services> {
  const store = await openStore({ dataDir: config.dataDir, mongodbUrl: config.mongodbUrl, sqliteLocking: config.sqliteLocking })
  const coordination = await openCoordination({ dataDir: config.dataDir, redisUrl: config.redisUrl })
  const { clock, persist } = await openClock(config, store)
  const bus = await EventBus.open(store, coordination, clock, logger)
  const inspection = config.inspect ? await createInspection({ url: config.inspectUrl }) : null
  // Features register their actor kinds below; `startActors` runs once all are registered.
  const runtime = new ActorRuntime({ store, coordination, clock, logger, instanceId: `inst_${randomId(10)}`, inspect: inspection?.inspect })

  const [rawWorkspaces, keyRepo, agentRepo, numberRepo, contactRepo, ledger] = await Promise.all([
    openWorkspaces(store),
    openApiKeys(store),
    openAgents(store),
    openPhoneNumbers(store),
    openContacts(store),
    UsageLedger.open(store),
  ])

  // Every workspace write drops the cached principals that carry that workspace.
  const workspaceRepo = observeWrites(rawWorkspaces, (id) => keys.invalidateWorkspace(id))
  const keys: KeyService = new KeyService(keyRepo, workspaceRepo, clock, coordination)
  await keys.start()
  const workspaces = new WorkspaceService(workspaceRepo, clock)
  const agents = new AgentService(agentRepo, clock, defaultModel(config), await AgentNumbers.open(store, agentRepo))
  const numbers = new PhoneNumberService(numberRepo, agentRepo, clock, (agentId, number) => agents.setPhoneNumber(agentId, number))
  agents.onDelete((agent) => numbers.unassignAgent(agent.id))
  const customers = new CustomerService(workspaceRepo, { agents: agentRepo, phoneNumbers: numberRepo, contacts: contactRepo }, ledger, clock)
  const customerHooks = new CustomerLifecycleHooks()
  const customerEffects = new CustomerLifecycleEffects({ workspaces: workspaceRepo, keys, hooks: customerHooks, erasure: new CustomerErasure(store, agents) })
  const customerActors = registerCustomerWorkspace(runtime, { effects: customerEffects, clock, logger })
  const customerLifecycle = new CustomerLifecycle({ actors: customerActors, workspaces: workspaceRepo, phoneNumbers: numberRepo, clock })
  const contacts = new ContactService(contactRepo, clock)
  const knowledge = await KnowledgeService.open(store, clock, { allowPrivate: config.allowPrivateWebhookTargets })
  agents.onDelete((agent) => knowledge.removeAllForAgent(agent.workspaceId, agent.id))
  // Other instances drop their cached index of an agent whose knowledge changed here.
  const stopKnowledgeSync = await syncKnowledgeAcrossInstances(knowledge, coordination, logger)
  const talk = await buildConversationFeature({ config, store, clock, coordination, bus, ledger, agents, knowledge })
  const analytics = await AnalyticsService.open(store, bus.events, clock)
  const versioning = await buildVersionsFeature({ store, clock, logger, runtime, agents, knowledge })
  const webhookFeature = await buildWebhooksFeature({ config, store, clock, logger, bus, runtime, agents, workspaces: workspaceRepo, coordination })
  customerHooks.onDeleted((e) => webhookFeature.switchOffCustomerWebhooks(e.customerId, e.at), 'webhooks switched off')
  customerHooks.onErased((e) => webhookFeature.eraseCustomerWebhooks(e.customerId), 'webhooks erased')

  // Under the manual clock, an advance answers only after every timer due by then has fired and
  // the effects those timers started (the 30-day erasure, a delivery retry) have run.
  const onClockAdvance: Services['onClockAdvance'] = [async (now) => void (await runtime.runDue(now))]
  const clockControl: ClockControl = {
    clock,
    async afterAdvance(now) {
      await persist(now)
      for (const run of onClockAdvance) await run(now)
    },
  }

  // Every feature has registered its actor kinds by now: resume pending work, start the timer pump.
  await runtime.start()
  // Then the events a crash left recorded but undispatched (their legacy deliveries need the runtime).
  await bus.start()

  return {
    config,
    logger,
    clock,
    store,
    coordination,
    workspaces,
    resolver: new WorkspaceResolver(workspaceRepo),
    keys,
    customers,
    customerLifecycle,
    customerHooks,
    agents,
    numbers,
    contacts,
    ledger,
    bus,
    runtime,
    inspection,
    knowledge,
    ...talk,
    analytics,
    versions: versioning.versions,
    serving: versioning.serving,
    webhooks: webhookFeature.webhooks,
    legacyWebhooks: webhookFeature.legacyWebhooks,
    notifications: webhookFeature.notifications,
    outbox: webhookFeature.outbox,
    clockControl,
    onClockAdvance,
    async close() {
      await webhookFeature.stop()
      await runtime.stop()
      await inspection?.stop()
      await keys.stop()
      await bus.close()
      await stopKnowledgeSync()
      await coordination.close()
      await store.close()
    },
  }
}
