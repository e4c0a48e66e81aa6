/**
 * Builds the service: the kernel (store, coordination, clock, event bus, actor runtime), then every
 * feature in FEATURES order, then starts them: actor kinds are registered by now, so the runtime
 * starts (resuming pending work), then the bus (dispatching what a crash left), then each
 * feature's own start. Shutdown runs in reverse. Adding a feature is its folder and one line here.
 */

import { ActorRuntime, createInspection } from '../actors'
import { type Clock, ManualClock, systemClock } from './clock'
import type { Config } from './config'
import { openCoordination } from './coordination'
import { EventBus } from './events/bus'
import { agentsFeature } from './features/agents'
import { analyticsFeature } from './features/analytics'
import { byokFeature } from './features/byok'
import { callsFeature } from './features/calls'
import { campaignsFeature } from './features/campaigns'
import { clockFeature } from './features/clock'
import { consoleAppFeature } from './features/console-app'
import { contactsFeature } from './features/contacts'
import { conversationsFeature } from './features/conversations'
import { customersFeature } from './features/customers'
import { inspectionFeature } from './features/inspection'
import { knowledgeFeature } from './features/knowledge'
import { messagingFeature } from './features/messaging'
import { modelsFeature } from './features/models'
import { notificationsFeature } from './features/notifications'
import { phoneNumbersFeature } from './features/phone-numbers'
import { sequencesFeature } from './features/sequences'
import { simulationsFeature } from './features/simulations'
import { templatesFeature } from './features/templates'
import { usageFeature } from './features/usage'
import { versionsFeature } from './features/versions'
import { voicesFeature } from './features/voices'
import { webFeature } from './features/web'
import { webhooksFeature } from './features/webhooks'
import { tenancyFeature } from './features/workspaces'
import { openFileStorage } from './files'
import { randomId } from './ids'
import { ClockHooks } from './kernel/clock-hooks'
import { CustomerLifecycleHooks } from './kernel/customer-lifecycle'
import { Draining } from './kernel/draining'
import type { Feature, FeatureParts, FeatureRef, Kernel, KernelHttp } from './kernel/feature'
import type { Logger } from './logger'
import { Metrics, watchKernel } from './metrics'
import { openStore } from './store'
import type { DocumentStore } from './store/port'

/** Every feature, in build order: a feature may `use` only those above it. */
export const FEATURES: readonly Feature<unknown>[] = [
  tenancyFeature,
  notificationsFeature,
  agentsFeature,
  phoneNumbersFeature,
  contactsFeature,
  usageFeature,
  byokFeature,
  customersFeature,
  knowledgeFeature,
  conversationsFeature,
  analyticsFeature,
  versionsFeature,
  webhooksFeature,
  callsFeature,
  templatesFeature,
  messagingFeature,
  webFeature,
  sequencesFeature,
  campaignsFeature,
  simulationsFeature,
  modelsFeature,
  voicesFeature,
  clockFeature,
  inspectionFeature,
  consoleAppFeature,
]

export interface BuiltFeature {
  feature: Feature<unknown>
  parts: FeatureParts<unknown>
}

export interface Services extends Kernel {
  /** The built features, in FEATURES order (app.ts mounts their surfaces). */
  features: BuiltFeature[]
  /** A feature's services: `services.of(webhooksFeature).webhooks`. */
  of<S>(feature: FeatureRef<S>): S
  /** Shutdown's state: app.ts answers /health 503 and refuses new work once it is active. */
  draining: Draining
  /** Begins the drain (SIGTERM) and resolves once nothing is live here or the deadline has passed; `close` follows. */
  drain(): Promise<void>
  close(): Promise<void>
}

// After live calls have ended, effects still in flight (a delivery, a call's analysis) get this long
// to finish here; whatever is left is resumed by another instance, or here at the next start.
const SETTLE_MS = 5_000

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

export async function buildServices(config: Config, logger: Logger): Promise<Services> {
  const metrics = new Metrics(logger)
  const store = await openStore({ dataDir: config.dataDir, mongodbUrl: config.mongodbUrl, sqliteLocking: config.sqliteLocking, onCommit: metrics.commits(config.mongodbUrl ? 'mongodb' : 'sqlite') })
  const files = await openFileStorage({ dataDir: config.dataDir, mongodbUrl: config.mongodbUrl })
  const coordination = await openCoordination({ dataDir: config.dataDir, redisUrl: config.redisUrl })
  const { clock, persist } = await openClock(config, store)
  const bus = await EventBus.open(store, coordination, clock, logger)
  const inspection = config.inspect ? await createInspection({ url: config.inspectUrl, port: config.inspectPort }) : null
  // Features register their actor kinds while they are built; the runtime starts once all have.
  const runtime = new ActorRuntime({ store, coordination, clock, logger, instanceId: `inst_${randomId(10)}`, inspect: inspection?.inspect })
  watchKernel(metrics, { runtime, coordination, clock })

  let http: KernelHttp | null = null
  const clockHooks = new ClockHooks()
  clockHooks.on('durable timers', async (now) => void (await runtime.runDue(now)))
  const kernel: Kernel = {
    config,
    logger,
    clock,
    store,
    coordination,
    files,
    bus,
    runtime,
    inspection,
    metrics,
    customerHooks: new CustomerLifecycleHooks(),
    clockHooks,
    listening: { url: null, server: null },
    persistClock: persist,
    get http(): KernelHttp {
      if (!http) throw new Error('the HTTP contexts are not built yet: the tenancy feature must come first in FEATURES')
      return http
    },
    provideHttp(provided) {
      if (http) throw new Error('the HTTP contexts were provided already')
      http = provided
    },
  }

  const features: BuiltFeature[] = []
  const built = new Map<string, FeatureParts<unknown>>()
  const use = <S>(feature: FeatureRef<S>): S => {
    const parts = built.get(feature.name)
    if (!parts) throw new Error(`feature ${feature.name} is not built yet: move it above its users in FEATURES`)
    return parts.services as S
  }
  for (const feature of FEATURES) {
    const parts = await feature.build(kernel, use)
    if (built.has(feature.name)) throw new Error(`two features are named ${feature.name}`)
    built.set(feature.name, parts)
    features.push({ feature, parts })
  }

  // Every actor kind is registered: resume pending work and start the timer pump; then the events a
  // crash left undispatched (their deliveries need the runtime); then the features' own work.
  await runtime.start()
  await bus.start()
  for (const { parts } of features) await parts.start?.()

  const draining = new Draining()
  // The kernel's parts as they are now (its HTTP contexts were provided by the tenancy feature), and what only the whole service has.
  const services: Services = {
    ...kernel,
    http: kernel.http,
    features,
    of: use,
    draining,
    async drain() {
      draining.begin(config.drainSeconds)
      logger.info({ drainSeconds: config.drainSeconds }, 'draining: new work is refused; live calls may go on until the deadline')
      await runtime.drain()
      await Promise.all(features.map(({ feature, parts }) => parts.drain?.(draining).catch((err: unknown) => logger.error({ err, feature: feature.name }, 'draining failed'))))
      await draining.waitFor(() => runtime.busyCount === 0, Date.now() + SETTLE_MS)
    },
    async close() {
      for (const { parts } of [...features].reverse()) await parts.stop?.()
      await runtime.stop()
      await inspection?.stop()
      await bus.close()
      await coordination.close()
      await store.close()
      await files.close()
    },
  }
  return services
}
