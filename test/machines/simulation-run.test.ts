import { describe, expect, test } from 'bun:test'
import { canApply, SIMULATION_RUN_EFFECTS, type SimulationRunEvent, type SimulationRunState, simulationRunMachine } from '../../machines/simulation-run'
import { expectInert, type Harness, type RefusedRow, type Row, reach, refusals, roundTrips, starts, transitions } from './table'

const T0 = Date.UTC(2026, 10, 27, 9, 0, 0)
const start: SimulationRunEvent = { type: 'run.start', at: T0 + 1 }
const cancel: SimulationRunEvent = { type: 'run.cancel', at: T0 + 4 }
const progress = (finished: number, passed = finished, at = T0 + 5): SimulationRunEvent => ({ type: 'run.progress', at, finished, passed, failed: finished - passed })

const h: Harness<SimulationRunEvent> = {
  machine: simulationRunMachine,
  effects: SIMULATION_RUN_EFFECTS,
  invokes: SIMULATION_RUN_EFFECTS,
  input: { id: 'srun_1', total: 3 },
  canApply,
  paths: { queued: [], running: [start], done: [start, progress(3)], cancelled: [cancel] },
}

describe('simulation run: created', () => {
  starts(h, [{ name: 'POST a run', input: { id: 'srun_1', total: 3 }, to: 'queued', context: { finished: 0, startedAt: null } }])
})

const rows: Row<SimulationRunEvent>[] = [
  { from: 'queued', event: start, condition: 'accepted', to: 'running', also: ['playScenarios'], context: { startedAt: T0 + 1 } },
  { from: 'queued', event: cancel, condition: 'POST cancel', to: 'cancelled', also: ['emit:simulation.finished'], context: { finishedAt: T0 + 4 } },
  { from: 'running', event: cancel, condition: 'POST cancel', to: 'cancelled', also: ['emit:simulation.finished'], context: { finishedAt: T0 + 4 } },
  { from: 'running', event: progress(2, 1), condition: 'calls remain', to: 'running', context: { finished: 2, passed: 1, failed: 1 } },
  {
    from: 'running',
    event: progress(3, 2, T0 + 9),
    condition: 'every call judged',
    to: 'done',
    also: ['emit:simulation.finished'],
    context: { finished: 3, passed: 2, failed: 1, finishedAt: T0 + 9 },
  },
]

const refuse = (from: SimulationRunState, event: SimulationRunEvent, says?: string): RefusedRow<SimulationRunEvent> => ({ from, event, says })
const refused: RefusedRow<SimulationRunEvent>[] = [
  refuse('running', start, 'already'),
  refuse('done', start),
  refuse('done', cancel, 'only a queued or running run'),
  refuse('cancelled', cancel, 'already'),
  refuse('cancelled', start, 'permanent'),
]

describe('simulation run: transitions', () => transitions(h, rows))
describe('simulation run: refused moves', () => refusals(h, refused))

describe('simulation run: progress reports are idempotent', () => {
  test('an older report does not lower the count', () => expectInert(reach(h, 'running', { via: [start, progress(2)] }), progress(1, 1, T0 + 8)))
  test('the count never passes the calls', () => {
    const s = reach(h, 'running')
    s.actor.send(progress(99))
    expect(s.actor.getSnapshot().context.finished).toBe(3)
  })
})

describe('simulation run: snapshots', () => roundTrips(h))
