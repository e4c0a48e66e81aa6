/**
 * The agent-publication actor kind: the pure chart (machines/agent-publication.ts) bound to its
 * effects (src/features/versions/effects.ts) and registered with the runtime. One actor per agent,
 * keyed by the agent id.
 *
 * No deadlines: the chart waits for nothing but its own effects, which the runtime already counts
 * as pending work (a stored snapshot with a running effect is resumed at boot and the effect
 * re-runs; the effects are idempotent for that).
 */
import { fromPromise } from 'xstate'
import { agentPublicationMachine, MACHINE_VERSION, type EffectInput } from '../machines/agent-publication'
import type { PublicationEffects } from '../src/features/versions/effects'
import type { ActorKind } from './types'
import type { ActorRuntime } from './runtime'

export const AGENT_PUBLICATION_KIND = 'agentPublication'

const effect = (run: (input: EffectInput) => Promise<void>) => fromPromise<void, EffectInput>(({ input }) => run(input))

export function bindAgentPublication(effects: PublicationEffects) {
  return agentPublicationMachine.provide({
    actors: {
      backupCurrent: effect(effects.backupCurrent),
      restoreVersion: effect(effects.restoreVersion),
      freezeVersion: effect(effects.freezeVersion),
      goLive: effect(effects.goLive),
      storeCheckpoint: effect(effects.storeCheckpoint),
      stopServing: effect(effects.stopServing),
    },
  })
}

export type AgentPublicationMachine = ReturnType<typeof bindAgentPublication>
export type AgentPublicationKind = ActorKind<AgentPublicationMachine>

/** Registers the kind; call before `runtime.start()` so boot resumes effects left in flight. */
export function registerAgentPublication(runtime: ActorRuntime, effects: PublicationEffects): AgentPublicationKind {
  return runtime.register(AGENT_PUBLICATION_KIND, { machine: bindAgentPublication(effects), version: MACHINE_VERSION })
}
