/**
 * Inspection: live actors streamed to the Stately inspector through `@statelyai/inspect`, and the
 * read-only views the console serves (machine definitions for the visualiser, one actor's state).
 *
 * How an engineer watches live actors: start the service with INSPECT=1. `createInspection`
 * then starts the package's relay (`createInspectorServer`, on INSPECT_PORT, default 8080) and
 * connects every actor to it with `createWebSocketInspector`; the service prints the relay's page
 * (`viewerUrl`), which embeds https://stately.ai/inspect (so it needs the internet; the page says
 * so and points to the console app's state charts, which do not), fed from the relay
 * (inspection-relay.ts). With `url` it connects to a relay that already runs (another process, or
 * one shared by several instances) instead of starting one. The relay listens on every interface
 * of the machine, so keep INSPECT off on hosts reachable from outside.
 */
import { createWebSocketInspector } from '@statelyai/inspect'
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate'
import { type Relay, startRelay } from './inspection-relay'
import type { InspectObserver } from './live-actor'
import type { ActorDescription, ActorKindSpec, StoredActor } from './types'

// The relay's port when none is given: the package's own default, which its docs and the
// inspector page assume.
export const DEFAULT_INSPECTOR_PORT = 8080

export interface InspectionOptions {
  /** WebSocket URL of a running relay (ws://host:port). When absent, a relay is started. */
  url?: string
  /** Port for the relay this process starts (ignored with `url`). */
  port?: number
}

/** The relay's port is taken by another program: refused before the relay is started. */
export class InspectorPortTaken extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is in use by another program`)
    this.name = 'InspectorPortTaken'
  }
}

/**
 * Whether `port` can be listened on, on every interface as the relay will: the package's relay
 * has no error handler, so a taken port would end the process with an unhandled error.
 */
async function portFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, () => probe.close(() => resolve(true)))
  })
}

export interface Inspection {
  /** Pass as the runtime's `inspect` option. */
  inspect: InspectObserver
  /** Where to point a browser, when this process started the relay. */
  viewerUrl: string | null
  /** The page links here (the console app's state charts) once the service listens. */
  setConsoleChartsUrl(url: string): void
  stop(): Promise<void>
}

export async function createInspection(opts: InspectionOptions = {}): Promise<Inspection> {
  let relay: Relay | null = null
  let url = opts.url
  let viewerUrl: string | null = null
  if (!url) {
    const port = opts.port ?? DEFAULT_INSPECTOR_PORT
    if (!(await portFree(port))) throw new InspectorPortTaken(port)
    relay = startRelay(port)
    url = `ws://127.0.0.1:${port}`
    viewerUrl = `http://localhost:${port}`
  }
  const inspector = createWebSocketInspector({ url })
  return {
    inspect: inspector.inspect,
    viewerUrl,
    setConsoleChartsUrl(chartsUrl) {
      if (relay) relay.consoleChartsUrl = chartsUrl
    },
    async stop() {
      inspector.stop()
      relay?.stop()
    },
  }
}

export interface MachineDefinition {
  /** The actor kind it is registered under (`GET /console/machines/{name}`). */
  name: string
  /** The chart's own id. */
  id: string
  version: number
  /** `machine.toJSON()`: the resolved state-node tree (states, transitions, invokes). */
  definition: unknown
  /**
   * The config as written (`createMachine(<config>)`), JSON-safe: what Stately Studio's "import
   * from code" and the visualiser take. Inline functions appear as `{ type: <name> }`, as the
   * inspector itself shows them.
   */
  config: unknown
}

export function machineDefinition(name: string, spec: ActorKindSpec): MachineDefinition {
  const machine: AnyStateMachine = spec.machine
  return {
    name,
    id: machine.id,
    version: spec.version,
    definition: jsonSafe(machine.toJSON()),
    config: jsonSafe(machine.config),
  }
}

/** A JSON round trip that keeps functions as `{ type: name }` and drops cycles. */
function jsonSafe(value: unknown): unknown {
  const seen = new WeakSet<object>()
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'function') return { type: (v as { name?: string }).name || 'anonymous' }
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return undefined
        seen.add(v)
      }
      return v
    }),
  )
}

export function describeLive(base: { kind: string; id: string; key: string; owner: string; spec: ActorKindSpec }, snap: AnyMachineSnapshot, stored: StoredActor | null): ActorDescription {
  return {
    id: base.key,
    kind: base.kind,
    resourceId: base.id,
    live: true,
    owner: base.owner,
    version: base.spec.version,
    currentVersion: base.spec.version,
    value: snap.value,
    status: snap.status,
    context: snap.context,
    deadlines: snap.status === 'active' ? (base.spec.deadlines?.(snap) ?? []) : [],
    pendingWork: stored?.pendingWork ?? false,
    updatedAt: stored?.updatedAt ?? null,
  }
}

export function describeStored(doc: StoredActor, currentVersion: number, owner: string | null): ActorDescription {
  const snapshot = doc.snapshot as { context?: unknown } | null
  return {
    id: doc.id,
    kind: doc.kind,
    resourceId: doc.resourceId,
    live: false,
    owner,
    version: doc.version,
    currentVersion,
    value: doc.state,
    status: doc.status,
    context: snapshot?.context ?? null,
    deadlines: doc.deadlines,
    pendingWork: doc.pendingWork,
    updatedAt: doc.updatedAt,
  }
}
