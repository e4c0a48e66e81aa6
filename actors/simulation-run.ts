/**
 * The simulation run actor kind: machines/simulation-run.ts bound to its effect, one actor per run
 * (`srun_…`). `playScenarios` is a callback actor that runs while the run is `running`: it starts
 * the feature's runner and hands back its stop function, so a cancel stops it before its next call;
 * progress comes back as `run.progress`. A crash while running leaves the child in the stored
 * snapshot, so the runtime resumes the actor at boot and the runner carries on from its rows.
 */
import { type EventObject, fromCallback } from 'xstate'
import { MACHINE_VERSION, type SimulationRunEffectInput, type SimulationRunSnapshot, simulationRunMachine } from '../machines/simulation-run'
import type { Clock } from '../src/clock'
import type { ActorRuntime } from './runtime'
import type { ActorKind, OutboxEntry } from './types'

export const SIMULATION_RUN_KIND = 'simulation-run'

export type SimulationRunActors = ActorKind<typeof simulationRunMachine>

/** What the runner tells the chart: absolute counts so far. */
export type RunProgress = (counts: { finished: number; passed: number; failed: number }) => void

export interface SimulationRunEffectPort {
  /** Starts playing every call not judged yet; returns the function that stops it. */
  play(id: string, progress: RunProgress): () => void
  project(id: string, snapshot: SimulationRunSnapshot): Promise<void>
  publish(id: string, event: OutboxEntry['event'], eventId: string): Promise<void>
}

export function registerSimulationRun(runtime: ActorRuntime, deps: { effects: SimulationRunEffectPort; clock: Clock }): SimulationRunActors {
  const machine = simulationRunMachine.provide({
    actors: {
      playScenarios: fromCallback<EventObject, SimulationRunEffectInput>(({ input, sendBack }) =>
        deps.effects.play(input.id, (counts) => sendBack({ type: 'run.progress', at: deps.clock.now(), ...counts })),
      ),
    },
  })
  return runtime.register(SIMULATION_RUN_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: () => [],
    persisted: (id, snapshot) => deps.effects.project(id, snapshot as SimulationRunSnapshot),
    emitted: (id, event, eventId) => deps.effects.publish(id, event, eventId),
  })
}
