/**
 * Simulations as stored: scenarios, suites, runs (the run actor's projection plus what it froze at
 * the POST) and one result row per call a run makes, which the runner writes as it goes and reads
 * again after a restart.
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import { type ScopedCollection, WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'
import type { ExpectationSpec, ScenarioInput } from './model'

type Scalar = string | number | boolean

export interface ScenarioDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  name: string
  channel: 'phone' | 'web' | 'chatapp'
  caller: ScenarioInput['caller']
  variables: Record<string, Scalar>
  expectations: ExpectationSpec[]
  /** A scenario from a call: the try whose recording its `audio` lines play. */
  replayOf?: { callId: string; attempt: number }
  /** A scenario from a call: the call's own outcome, offered as expectations. */
  suggestedExpectations?: ExpectationSpec[]
  createdAt: string
  updatedAt: string
}

export interface SuiteDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  name: string
  agentId: string
  scenarios: string[]
  requiredToPublish: boolean
  createdAt: string
  updatedAt: string
}

export type RunStatus = 'queued' | 'running' | 'done' | 'cancelled'

export interface RunDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  suiteId: string
  agentId: string
  target: 'draft' | number
  count: number
  seed: number
  webhooks: boolean
  /** The suite's scenarios as they were at the POST: a run plays what it was asked to, edits after do not reach it. */
  scenarios: ScenarioDoc[]
  /** The draft's fingerprint at the POST (runs of `draft`): the publish gate counts only a run of the draft as it is. */
  draftHash: string | null
  status: RunStatus
  total: number
  finished: number
  passed: number
  failed: number
  createdAt: string
  startedAt: string | null
  finishedAt: string | null
}

export type Line = { speaker: string; text: string; atMs: number }
export type AnswerTime = { caller: string | null; waitedMs: number; answerMs: number | null }
export type ExpectationOutcome = ExpectationSpec & { passed: boolean; evidence: Record<string, unknown> }

export interface ResultDoc {
  [field: string]: unknown
  /** `<runId>:<n>`, n the call's place in the run (scenario order, then instance). */
  id: string
  runId: string
  workspaceId: string
  index: number
  scenarioId: string
  name: string
  instance: number
  status: 'pending' | 'calling' | 'passed' | 'failed' | 'cancelled'
  callId: string | null
  /** Calls placed for it: a call dropped by a restart is placed again. */
  attempts: number
  transcript: Line[]
  expectations: ExpectationOutcome[]
  error: string | null
  /** The call's or chat's conversation; absent on rows written before chats existed. */
  conversation?: string | null
  /** `turns`: each caller turn's words, the silence the agent waited and the ms until its first audio; absent on rows written before. */
  call: { id: string; recording: string | null; hangup: string | null; latency: unknown; turns?: AnswerTime[] } | null
  /** The fields the call's or chat's analysis read, and the tools the agent called, in order; absent on rows written before they were kept. */
  fields?: Record<string, unknown>
  tools?: string[]
}

export const scenariosSpec = workspaceSpec('simulation_scenarios')
export const suitesSpec = workspaceSpec('simulation_suites')
export const runsSpec: CollectionSpec = workspaceSpec('simulation_runs', [
  {
    name: 'suite_created',
    fields: [
      ['suiteId', 1],
      ['createdAt', -1],
      ['id', -1],
    ],
  },
])
export const resultsSpec: CollectionSpec = {
  name: 'simulation_results',
  indexes: [
    {
      name: 'run_index',
      fields: [
        ['runId', 1],
        ['index', 1],
      ],
    },
  ],
}

export interface SimulationStore {
  scenarios: Collection<ScenarioDoc>
  suites: Collection<SuiteDoc>
  runs: Collection<RunDoc>
  results: Collection<ResultDoc>
}

export async function openSimulationStore(store: DocumentStore): Promise<SimulationStore> {
  const [scenarios, suites, runs, results] = await Promise.all([
    store.collection<ScenarioDoc>(scenariosSpec),
    store.collection<SuiteDoc>(suitesSpec),
    store.collection<RunDoc>(runsSpec),
    store.collection<ResultDoc>(resultsSpec),
  ])
  return { scenarios, suites, runs, results }
}

/** One workspace's simulations: every read and write of a service acting for it goes through these views. */
export interface WorkspaceSimulations {
  scenarios: ScopedCollection<ScenarioDoc>
  suites: ScopedCollection<SuiteDoc>
  runs: ScopedCollection<RunDoc>
  results: ScopedCollection<ResultDoc>
}

export function simulationsIn(store: SimulationStore, workspaceId: string): WorkspaceSimulations {
  return {
    scenarios: new WorkspaceCollection(store.scenarios).in(workspaceId),
    suites: new WorkspaceCollection(store.suites).in(workspaceId),
    runs: new WorkspaceCollection(store.runs).in(workspaceId),
    results: new WorkspaceCollection(store.results).in(workspaceId),
  }
}
