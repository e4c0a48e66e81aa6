/**
 * An actor kind, declared once: its chart, version, durable waits and the way a feature's port
 * implements the chart's effects. The definition lives with its feature (`src/features/<x>/actor.ts`);
 * the kernel binds each effect the one way (actors/effects.ts), provides them to the chart and
 * registers the kind, so no feature code sits in the runtime's folder and no kind repeats the
 * registration. A feature's build calls `register(runtime, port)` before the runtime starts.
 */
import type { AnyStateMachine, PromiseActorLogic, SnapshotFrom } from 'xstate'
import type { Clock } from '../src/clock'
import { bindEffect, type EffectBinding } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind, ActorKindSpec, OutboxEntry } from './types'

/** What a kind's effects are built with. */
export interface EffectKit<S> {
  /** Binds one I/O effect (bindEffect): a failure is logged and becomes an EffectError with its instant. */
  effect<I extends S, O>(name: string, run: (input: I, signal: AbortSignal) => Promise<O>): PromiseActorLogic<O, I>
  /** The service clock, for the instant of an event a callback actor sends back. */
  clock: Clock
}

/** The implementations `machine.provide()` takes for this chart (its effects, by the names it invokes). */
export type Implementations<M extends AnyStateMachine> = Parameters<M['provide']>[0]

export interface ActorKindDefinition<M extends AnyStateMachine, P, S> extends Pick<ActorKindSpec<M>, 'version' | 'deadlines' | 'pendingWork' | 'migrate' | 'idleMs'> {
  /** Part of every stored snapshot's key and durable timer: never renamed. */
  kind: string
  /** The pure chart (machines/). */
  machine: M
  /** What names the resource in an effect's failure log line (e.g. `id#attempt`). */
  subject?: (input: S) => unknown
  /** The chart's effects over the feature's port. */
  provide(port: P, kit: EffectKit<S>): Implementations<M>
  /** After each stored change (a read model's projection); see ActorKindSpec.persisted. */
  persisted?(port: P, resourceId: string, snapshot: SnapshotFrom<M>): Promise<void>
  /** Where the chart's emitted events go, with their stable id; see ActorKindSpec.emitted. */
  emitted?(port: P, resourceId: string, event: OutboxEntry['event'], id: string): Promise<void>
}

export interface DefinedActorKind<M extends AnyStateMachine, P> {
  readonly kind: string
  /** The chart with the port's effects provided. */
  bind(port: P, deps: Omit<EffectBinding, 'kind'>): M
  /** Registers the kind on `runtime` (before `runtime.start()`, so boot resumes its pending work). */
  register(runtime: ActorRuntime, port: P): ActorKind<M>
  /** The kind's typed view, before registering too: for a port whose effects send to their own kind. */
  actors(runtime: ActorRuntime): ActorKind<M>
}

/** A kind's typed view of the runtime, as `register` returns it. */
export type ActorsOf<K> = K extends DefinedActorKind<infer M, infer _P> ? ActorKind<M> : never

export function defineActorKind<M extends AnyStateMachine, P, S = unknown>(def: ActorKindDefinition<M, P, S>): DefinedActorKind<M, P> {
  const { kind, machine, provide, persisted, emitted, subject, ...spec } = def
  const bind = (port: P, deps: Omit<EffectBinding, 'kind'>): M => {
    const binding: EffectBinding = { kind, ...deps }
    const kit: EffectKit<S> = { clock: deps.clock, effect: (name, run) => bindEffect(binding, name, run, subject) }
    // provide() keeps the chart's own type; its declared return names the concrete StateMachine.
    return machine.provide(provide(port, kit)) as M
  }
  return {
    kind,
    bind,
    actors: (runtime) => runtime.view<M>(kind),
    register(runtime, port) {
      return runtime.register(kind, {
        ...spec,
        machine: bind(port, { clock: runtime.clock, logger: runtime.logger }),
        ...(persisted ? { persisted: (id: string, snapshot: SnapshotFrom<M>) => persisted(port, id, snapshot) } : {}),
        ...(emitted ? { emitted: (id: string, event: OutboxEntry['event'], eventId: string) => emitted(port, id, event, eventId) } : {}),
      })
    },
  }
}
