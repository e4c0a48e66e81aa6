/**
 * The customer-workspace actor kind: the pure chart (machines/customer-workspace.ts) bound to its
 * effects (lifecycle-effects.ts). One actor per customer, id = the customer's `org_…` id, spawned
 * lazily by the first lifecycle move (send with `input`): a customer that is never deleted never
 * costs an actor.
 *
 * A failed effect becomes an EffectError carrying the instant it failed on the service clock, so
 * the chart times its retry (`retryAt`, a durable deadline) without reading a clock itself. An
 * effect in flight at a crash is in the stored snapshot as a running child: the runtime resumes
 * that actor at boot and XState runs the effect again.
 */
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import { type ArchiveInput, customerWorkspaceDeadlines, customerWorkspaceMachine, type EraseInput, MACHINE_VERSION, type RestoreInput } from '../../../machines/customer-workspace'

/** The I/O behind the chart's effects. */
export interface CustomerWorkspaceEffectPort {
  archive(input: ArchiveInput): Promise<void>
  restore(input: RestoreInput): Promise<void>
  erase(input: EraseInput): Promise<void>
}

export const customerWorkspaceKind = defineActorKind({
  kind: 'customerWorkspace',
  machine: customerWorkspaceMachine,
  version: MACHINE_VERSION,
  deadlines: customerWorkspaceDeadlines,
  // Lifecycle moves come days apart: hold an actor only while one of its effects runs.
  idleMs: 0,
  subject: (input: { id: string }) => input.id,
  provide: (port: CustomerWorkspaceEffectPort, { effect }) => ({
    actors: {
      archiveCustomer: effect('archiveCustomer', (i: ArchiveInput) => port.archive(i)),
      restoreCustomer: effect('restoreCustomer', (i: RestoreInput) => port.restore(i)),
      eraseCustomer: effect('eraseCustomer', (i: EraseInput) => port.erase(i)),
    },
  }),
})

export type CustomerWorkspaceActors = ActorsOf<typeof customerWorkspaceKind>
