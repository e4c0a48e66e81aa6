/**
 * A simulation run (docs/api/simulations.md): a suite's scenarios played by scripted callers
 * against a draft or a version.
 *
 *   queued --run.start--> running --run.progress (every instance finished)--> done
 *   queued | running --run.cancel--> cancelled
 *
 * - `running` invokes `playScenarios` (the simulations feature's runner) while it lasts, so leaving
 *   it (a cancel) stops the runner before its next call; a crash leaves the child in the stored
 *   snapshot and the runtime resumes it at boot, the runner carrying on from the results' rows.
 * - `run.progress` carries absolute counts (finished, passed, failed); a repeat is harmless.
 * - `simulation.finished` leaves through `emit()` on both ends, done and cancelled.
 * - A refused move (cancel a finished run) is recorded so the API answers 409 naming the state.
 */
import { assign, type EventObject, emit, fromCallback, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

export type SimulationRunState = 'queued' | 'running' | 'done' | 'cancelled'

export interface SimulationRunContext {
  id: string
  /** Calls the run makes in all (scenarios × count). */
  total: number
  finished: number
  passed: number
  failed: number
  startedAt: number | null
  finishedAt: number | null
  lastRefusal: Refusal | null
}

export interface SimulationRunInput {
  id: string
  total: number
}

export type SimulationRunEvent = { type: 'run.start'; at: number } | { type: 'run.cancel'; at: number } | { type: 'run.progress'; at: number; finished: number; passed: number; failed: number }

export type SimulationRunEmitted = { type: 'simulation.finished'; id: string }

export const SIMULATION_RUN_EFFECTS = ['playScenarios'] as const

export interface SimulationRunEffectInput {
  id: string
}

const refuse = (state: SimulationRunState, message: string) => ({ actions: { type: 'recordRefusal' as const, params: { state, message } } })

export const simulationRunMachine = setup({
  types: {
    context: {} as SimulationRunContext,
    events: {} as SimulationRunEvent,
    input: {} as SimulationRunInput,
    emitted: {} as SimulationRunEmitted,
  },
  actors: {
    playScenarios: fromCallback<EventObject, SimulationRunEffectInput>(() => {
      throw new Error('provided by the simulations binding')
    }),
  },
  actions: {
    emitFinished: emit(({ context }) => ({ type: 'simulation.finished' as const, id: context.id })),
    markStarted: assign({ startedAt: ({ event }) => event.at }),
    markFinished: assign({ finishedAt: ({ event }) => event.at }),
    recordProgress: assign(({ context, event }) => {
      if (event.type !== 'run.progress' || !(event.finished >= context.finished)) return {}
      return { finished: Math.min(context.total, event.finished), passed: event.passed, failed: event.failed }
    }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    allFinished: ({ context }) => context.finished >= context.total,
  },
}).createMachine({
  id: 'simulationRun',
  description: 'A run of a suite of simulated callers against a draft or a version.',
  context: ({ input }) => ({ id: input.id, total: Math.max(0, input.total), finished: 0, passed: 0, failed: 0, startedAt: null, finishedAt: null, lastRefusal: null }),
  initial: 'queued',
  states: {
    queued: {
      description: 'Accepted (202); its calls have not started.',
      on: {
        'run.start': { target: 'running', actions: ['markStarted'] },
        'run.cancel': { target: 'cancelled', actions: ['markFinished', 'emitFinished'] },
      },
    },
    running: {
      description: 'Placing the scenarios’ calls and judging each as it is analysed (playScenarios runs while here).',
      always: { guard: 'allFinished', target: 'done' },
      invoke: { id: 'playScenarios', src: 'playScenarios', input: ({ context }) => ({ id: context.id }) },
      on: {
        'run.progress': { actions: 'recordProgress' },
        'run.cancel': { target: 'cancelled', actions: ['markFinished', 'emitFinished'] },
        'run.start': refuse('running', 'the run is running already'),
      },
    },
    done: {
      description: 'Every call was played and judged: passed, failed and the results are final.',
      entry: ['markFinished', 'emitFinished'],
      on: {
        'run.cancel': refuse('done', 'the run is done; only a queued or running run can be cancelled'),
        'run.start': refuse('done', 'the run is done'),
      },
    },
    cancelled: {
      description: 'Cancelled by request: calls in progress end, none start; permanent.',
      on: {
        'run.cancel': refuse('cancelled', 'the run is cancelled already'),
        'run.start': refuse('cancelled', 'the run is cancelled; cancelling is permanent'),
      },
    },
  },
})

export type SimulationRunSnapshot = SnapshotFrom<typeof simulationRunMachine>

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(target: SimulationRunSnapshot | SimulationRunState, event: SimulationRunEvent | SimulationRunEvent['type']): CanApply {
  return canApplyOn(simulationRunMachine, target, event)
}
