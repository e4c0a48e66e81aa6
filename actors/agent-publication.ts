/**
 * The agent-publication actor kind: the pure chart (machines/agent-publication.ts) bound to its
 * effects (src/features/versions/effects.ts) and registered with the runtime. One actor per agent,
 * keyed by the agent id.
 *
 * No deadlines: the chart waits for nothing but its own effects, which the runtime already counts
 * as pending work (a stored snapshot with a running effect is resumed at boot and the effect
 * re-runs; the effects are idempotent for that).
 */
import { agentPublicationMachine, type EffectInput, MACHINE_VERSION } from '../machines/agent-publication'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect, type EffectBinding } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind } from './types'

export const AGENT_PUBLICATION_KIND = 'agentPublication'

/** The I/O behind the chart's effects (src/features/versions/effects.ts implements it). */
export interface AgentPublicationEffectPort {
  backupCurrent(input: EffectInput): Promise<void>
  restoreVersion(input: EffectInput): Promise<void>
  freezeVersion(input: EffectInput): Promise<void>
  goLive(input: EffectInput): Promise<void>
  storeCheckpoint(input: EffectInput): Promise<void>
  stopServing(input: EffectInput): Promise<void>
}

export function bindAgentPublication(effects: AgentPublicationEffectPort, deps: { clock: Clock; logger: Logger }) {
  const binding: EffectBinding = { kind: AGENT_PUBLICATION_KIND, ...deps }
  const effect = (name: string, run: (input: EffectInput) => Promise<void>) => bindEffect(binding, name, run, (input) => input.agentId)
  return agentPublicationMachine.provide({
    actors: {
      backupCurrent: effect('backupCurrent', (i) => effects.backupCurrent(i)),
      restoreVersion: effect('restoreVersion', (i) => effects.restoreVersion(i)),
      freezeVersion: effect('freezeVersion', (i) => effects.freezeVersion(i)),
      goLive: effect('goLive', (i) => effects.goLive(i)),
      storeCheckpoint: effect('storeCheckpoint', (i) => effects.storeCheckpoint(i)),
      stopServing: effect('stopServing', (i) => effects.stopServing(i)),
    },
  })
}

export type AgentPublicationMachine = ReturnType<typeof bindAgentPublication>
export type AgentPublicationKind = ActorKind<AgentPublicationMachine>

/** Registers the kind; call before `runtime.start()` so boot resumes effects left in flight. */
export function registerAgentPublication(runtime: ActorRuntime, effects: AgentPublicationEffectPort, deps: { clock: Clock; logger: Logger }): AgentPublicationKind {
  return runtime.register(AGENT_PUBLICATION_KIND, { machine: bindAgentPublication(effects, deps), version: MACHINE_VERSION })
}
