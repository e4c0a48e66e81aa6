/**
 * The one contract every feature keeps. A feature is a folder under `src/features/<name>/`:
 * `public.ts` names it (`featureRef`, with the type of the services it hands over) and exports
 * what other features may use (types, constants, helpers); `index.ts` is its build,
 * `defineFeature(ref, { build })`. `build` gets the kernel (store, coordination, clock, bus,
 * actor runtime, the HTTP contexts, the customer lifecycle hooks) and `use`, which hands over the
 * services of a feature built earlier in the list — the only way one feature reaches another, and
 * it takes the ref, so a feature never imports another's build. It returns the feature's
 * services and, as it needs, the route plugins of each surface and its own start/stop.
 *
 * The kernel (this folder, http/, store/, coordination/, actors/, machines/) imports no feature;
 * what it needs of one (authenticating a key, resolving a workspace) is a port the feature
 * provides at build time (`provideHttp`, http/authenticator.ts).
 *
 * `src/services.ts` is the ordered list; it builds every feature, starts the runtime and the bus,
 * then each feature's `start`, and stops them in reverse. `src/app.ts` mounts each surface by
 * looping over the same list.
 */

import type { AnyElysia } from 'elysia'
import type { ActorRuntime, Inspection } from '../../actors'
import type { Clock } from '../clock'
import type { Config } from '../config'
import type { Coordination } from '../coordination/port'
import type { EventBus } from '../events/bus'
import type { FileStorage } from '../files/port'
import type { consoleAuth } from '../http/console-auth'
import type { v1Context } from '../http/context'
import type { legacyContext } from '../http/legacy-context'
import type { Logger } from '../logger'
import type { Metrics } from '../metrics/metrics'
import type { CollectionSpec, DocumentStore } from '../store/port'
import type { ClockHooks } from './clock-hooks'
import type { CustomerLifecycleHooks } from './customer-lifecycle'
import type { Draining } from './draining'
import type { Principal, WorkspaceDoc } from './tenancy'

/**
 * The route contexts every surface's routes `.use()`, typed with the kernel's principal and
 * workspace (http/ itself knows only the authenticator port); provided by that feature.
 */
export interface KernelHttp {
  v1: ReturnType<typeof v1Context<Principal, WorkspaceDoc>>
  legacy: ReturnType<typeof legacyContext<Principal, WorkspaceDoc>>
  console: ReturnType<typeof consoleAuth<WorkspaceDoc>>
}

export interface Kernel {
  config: Config
  logger: Logger
  clock: Clock
  store: DocumentStore
  coordination: Coordination
  /** Recordings and received media: DATA_DIR, or GridFS with MONGODB_URL (src/files). */
  files: FileStorage
  bus: EventBus
  runtime: ActorRuntime
  inspection: Inspection | null
  /** This instance's Prometheus metrics (GET /metrics): features record into the named ones. */
  metrics: Metrics
  /** What a customer's delete, restore and erasure must also do: each feature subscribes its own. */
  customerHooks: CustomerLifecycleHooks
  /** Work to run after the manual clock moves (durable timers and features that keep time register here, by name). */
  clockHooks: ClockHooks
  /** Where this process's HTTP server listens (`http://127.0.0.1:port`), set once it does; null before. */
  listening: {
    url: string | null
    /**
     * The listening server, once there is one: routes and hooks read it (client addresses, idle
     * timeouts) from here rather than from Elysia's context, since one reader of `server` anywhere
     * makes Elysia define it on every request's context.
     */
    server: Bun.Server<unknown> | null
  }
  /** Stores the manual clock's time (so a restart does not travel back). */
  persistClock: (now: number) => Promise<void>
  /** The HTTP contexts; readable once the tenancy feature (first in the list) has provided them. */
  readonly http: KernelHttp
  /** Called once, by the tenancy feature. */
  provideHttp(http: KernelHttp): void
}

/** What `build` returns. A surface may take several plugins. */
export interface FeatureParts<S> {
  services: S
  v1?: AnyElysia[]
  legacy?: AnyElysia[]
  console?: AnyElysia[]
  /** WebSocket routes (the media bridge), mounted at the root outside the three API surfaces. */
  ws?: AnyElysia[]
  /** Vendors' webhooks (telephony status callbacks) at the root, under http/body-limits' VENDOR_CALLBACKS_PREFIX; they carry no API key and check the vendor's signature. */
  callbacks?: AnyElysia[]
  /** After the actor runtime and the event bus have started. */
  start?(): Promise<void>
  /** Before them, in reverse feature order. */
  stop?(): Promise<void>
  /**
   * Shutdown begins (every feature's at once, before `stop`): take on no new work; let live work
   * (calls in progress) go on until the drain's deadline, then end it politely. Resolves once
   * nothing of this feature is live here.
   */
  drain?(draining: Draining): Promise<void>
}

/** A feature's name and the type of the services it hands over: what `use` takes (exported by the feature's public.ts). */
export interface FeatureRef<S> {
  readonly name: string
  /** Never set: carries the services' type. */
  readonly services?: S
}

export const featureRef = <S>(name: string): FeatureRef<S> => ({ name })

/** Hands over the services of a feature built earlier in the list. */
export type Use = <S>(feature: FeatureRef<S>) => S

export interface Feature<S = unknown> extends FeatureRef<S> {
  build(kernel: Kernel, use: Use): Promise<FeatureParts<S>> | FeatureParts<S>
}

/** A feature's build, named by its ref: the services it returns must be what the ref promises. */
/** A feature's build, named by its ref: the services it returns must be what the ref promises. */
export const defineFeature = <S>(ref: FeatureRef<S>, feature: { build(kernel: Kernel, use: Use): Promise<FeatureParts<NoInfer<S>>> | FeatureParts<NoInfer<S>> }): Feature<S> => ({
  name: ref.name,
  build: feature.build,
})

/** A customer-erased clean-up that deletes everything of the workspace in `specs`, in that order (children first). */
export function eraseCollections(store: DocumentStore, specs: readonly CollectionSpec[]) {
  return async ({ customerId }: { customerId: string }): Promise<void> => {
    for (const spec of specs) await (await store.collection(spec)).deleteMany({ workspaceId: customerId })
  }
}
