/**
 * The simulation run actor kind: machines/simulation-run.ts bound to its effect, one actor per run
 * (`srun_…`). `playScenarios` is a callback actor that runs while the run is `running`: it starts
 * the feature's runner and hands back its stop function, so a cancel stops it before its next call;
 * progress comes back as `run.progress`. A crash while running leaves the child in the stored
 * snapshot, so the runtime resumes the actor at boot and the runner carries on from its rows.
 */
import { type EventObject, fromCallback } from 'xstate'
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import type { OutboxEntry } from '../../../actors/types'
import { MACHINE_VERSION, type SimulationRunEffectInput, type SimulationRunSnapshot, simulationRunMachine } from '../../../machines/simulation-run'

/** What the runner tells the chart: absolute counts so far. */
export type RunProgress = (counts: { finished: number; passed: number; failed: number }) => void

export interface SimulationRunEffectPort {
  /** Starts playing every call not judged yet; returns the function that stops it. */
  play(id: string, progress: RunProgress): () => void
  project(id: string, snapshot: SimulationRunSnapshot): Promise<void>
  publish(id: string, event: OutboxEntry['event'], eventId: string): Promise<void>
}

export const simulationRunKind = defineActorKind({
  kind: 'simulation-run',
  machine: simulationRunMachine,
  version: MACHINE_VERSION,
  provide: (port: SimulationRunEffectPort, { clock }) => ({
    actors: {
      playScenarios: fromCallback<EventObject, SimulationRunEffectInput>(({ input, sendBack }) => port.play(input.id, (counts) => sendBack({ type: 'run.progress', at: clock.now(), ...counts }))),
    },
  }),
  persisted: (port, id, snapshot) => port.project(id, snapshot),
  emitted: (port, id, event, eventId) => port.publish(id, event, eventId),
})

export type SimulationRunActors = ActorsOf<typeof simulationRunKind>
