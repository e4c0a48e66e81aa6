/**
 * The customer-workspace actor kind: the pure chart (machines/customer-workspace.ts) bound to its
 * real effects, and registered with the runtime. One actor per customer, id = the customer's
 * `org_…` id, spawned lazily by the first lifecycle move (send with `input`): a customer that is
 * never deleted never costs an actor.
 *
 * Effects run as invoked promises (actors/effects.ts). A failure is turned into an EffectError carrying the instant it
 * failed on the service clock, so the chart can time its retry (`retryAt`, a durable deadline)
 * without reading a clock itself. An effect in flight at a crash is in the stored snapshot as a
 * running child: the runtime resumes that actor at boot and XState runs the effect again.
 */
import type { AnyActorLogic } from 'xstate'
import {
  type ArchiveInput,
  type CustomerWorkspaceEffect,
  customerWorkspaceDeadlines,
  customerWorkspaceMachine,
  type EraseInput,
  MACHINE_VERSION,
  type RestoreInput,
} from '../machines/customer-workspace'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind } from './types'

export const CUSTOMER_WORKSPACE_KIND = 'customerWorkspace'

export type CustomerWorkspaceActors = ActorKind<typeof customerWorkspaceMachine>

/** The I/O behind the chart's effects (src/features/customers/lifecycle-effects.ts). */
export interface CustomerWorkspaceEffectPort {
  archive(input: ArchiveInput): Promise<void>
  restore(input: RestoreInput): Promise<void>
  erase(input: EraseInput): Promise<void>
}

export function registerCustomerWorkspace(runtime: ActorRuntime, deps: { effects: CustomerWorkspaceEffectPort; clock: Clock; logger: Logger }): CustomerWorkspaceActors {
  const binding = { kind: CUSTOMER_WORKSPACE_KIND, clock: deps.clock, logger: deps.logger }
  const bind = <I extends { id: string }>(name: CustomerWorkspaceEffect, run: (input: I) => Promise<void>): AnyActorLogic => bindEffect(binding, name, run, (input) => input.id)
  const machine = customerWorkspaceMachine.provide({
    actors: {
      archiveCustomer: bind<ArchiveInput>('archiveCustomer', (i) => deps.effects.archive(i)),
      restoreCustomer: bind<RestoreInput>('restoreCustomer', (i) => deps.effects.restore(i)),
      eraseCustomer: bind<EraseInput>('eraseCustomer', (i) => deps.effects.erase(i)),
    },
  })
  return runtime.register(CUSTOMER_WORKSPACE_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: customerWorkspaceDeadlines,
    // Lifecycle moves come days apart: hold an actor only while one of its effects runs.
    idleMs: 0,
  })
}
