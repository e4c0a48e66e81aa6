/**
 * The machine registry: every stateful resource's chart, its version (persisted beside each
 * snapshot, so a runtime can tell a snapshot of an older chart shape) and the named effects the
 * runtime must provide. The console lists these and exports definitions as JSON for the
 * Stately visualiser.
 */
import type { AnyStateMachine } from 'xstate'
import * as agentPublication from './agent-publication'
import * as call from './call'
import * as campaign from './campaign'
import * as customerWorkspace from './customer-workspace'
import * as enrolment from './enrolment'
import * as simulationRun from './simulation-run'
import * as webhookDelivery from './webhook-delivery'
import * as webhookEndpoint from './webhook-endpoint'

export interface MachineEntry<M extends AnyStateMachine = AnyStateMachine> {
  machine: M
  version: number
  /** The I/O effects: invoked (or spawned) actors the binding provides with `machine.provide({ actors })`. */
  effects: readonly string[]
}

export const machines = {
  call: { machine: call.callMachine, version: call.MACHINE_VERSION, effects: call.CALL_EFFECTS },
  campaign: { machine: campaign.campaignMachine, version: campaign.MACHINE_VERSION, effects: campaign.CAMPAIGN_EFFECTS },
  customerWorkspace: {
    machine: customerWorkspace.customerWorkspaceMachine,
    version: customerWorkspace.MACHINE_VERSION,
    effects: customerWorkspace.CUSTOMER_WORKSPACE_EFFECTS,
  },
  webhookEndpoint: {
    machine: webhookEndpoint.webhookEndpointMachine,
    version: webhookEndpoint.MACHINE_VERSION,
    effects: webhookEndpoint.WEBHOOK_ENDPOINT_EFFECTS,
  },
  webhookDelivery: {
    machine: webhookDelivery.webhookDeliveryMachine,
    version: webhookDelivery.MACHINE_VERSION,
    effects: webhookDelivery.WEBHOOK_DELIVERY_EFFECTS,
  },
  enrolment: { machine: enrolment.enrolmentMachine, version: enrolment.MACHINE_VERSION, effects: enrolment.ENROLMENT_EFFECTS },
  agentPublication: {
    machine: agentPublication.agentPublicationMachine,
    version: agentPublication.MACHINE_VERSION,
    effects: agentPublication.AGENT_PUBLICATION_EFFECTS,
  },
  simulationRun: { machine: simulationRun.simulationRunMachine, version: simulationRun.MACHINE_VERSION, effects: simulationRun.SIMULATION_RUN_EFFECTS },
} as const satisfies Record<string, MachineEntry>

export type MachineName = keyof typeof machines

export const machineNames = Object.keys(machines) as MachineName[]

/** A plain-JSON definition (state nodes, transitions, descriptions) for export and inspection. */
export function machineDefinition(name: MachineName): unknown {
  return JSON.parse(JSON.stringify(machines[name].machine.toJSON()))
}

export type { CanApply, Refusal } from './refusal'
export { canApplyOn } from './refusal'
