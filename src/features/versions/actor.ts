/**
 * The agent-publication actor kind: the pure chart (machines/agent-publication.ts) bound to its
 * effects (effects.ts). One actor per agent, keyed by the agent id.
 *
 * No deadlines: the chart waits for nothing but its own effects, which the runtime already counts
 * as pending work (a stored snapshot with a running effect is resumed at boot and the effect
 * re-runs; the effects are idempotent for that).
 */
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import { agentPublicationMachine, type EffectInput, MACHINE_VERSION } from '../../../machines/agent-publication'

/** The I/O behind the chart's effects. */
export interface AgentPublicationEffectPort {
  backupCurrent(input: EffectInput): Promise<void>
  restoreVersion(input: EffectInput): Promise<void>
  freezeVersion(input: EffectInput): Promise<void>
  goLive(input: EffectInput): Promise<void>
  storeCheckpoint(input: EffectInput): Promise<void>
  stopServing(input: EffectInput): Promise<void>
}

export const agentPublicationKind = defineActorKind({
  kind: 'agentPublication',
  machine: agentPublicationMachine,
  version: MACHINE_VERSION,
  subject: (input: EffectInput) => input.agentId,
  provide: (port: AgentPublicationEffectPort, { effect }) => ({
    actors: {
      backupCurrent: effect('backupCurrent', (i: EffectInput) => port.backupCurrent(i)),
      restoreVersion: effect('restoreVersion', (i: EffectInput) => port.restoreVersion(i)),
      freezeVersion: effect('freezeVersion', (i: EffectInput) => port.freezeVersion(i)),
      goLive: effect('goLive', (i: EffectInput) => port.goLive(i)),
      storeCheckpoint: effect('storeCheckpoint', (i: EffectInput) => port.storeCheckpoint(i)),
      stopServing: effect('stopServing', (i: EffectInput) => port.stopServing(i)),
    },
  }),
})

export type AgentPublicationActors = ActorsOf<typeof agentPublicationKind>
