/** The API's shapes of scenarios, suites and runs (model.ts) from their stored documents. */
import type { ResultDoc, RunDoc, ScenarioDoc, SuiteDoc } from './repository'

export const presentScenario = (s: ScenarioDoc) => ({
  id: s.id,
  name: s.name,
  channel: s.channel,
  caller: s.caller,
  variables: s.variables,
  expectations: s.expectations,
  ...(s.suggestedExpectations ? { suggestedExpectations: s.suggestedExpectations } : {}),
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
})

export const presentSuite = (s: SuiteDoc) => ({
  id: s.id,
  name: s.name,
  agent: s.agentId,
  scenarios: s.scenarios,
  requiredToPublish: s.requiredToPublish,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
})

export const presentResult = (r: ResultDoc) => ({
  scenario: r.scenarioId,
  name: r.name,
  instance: r.instance,
  status: r.status,
  transcript: r.transcript,
  expectations: r.expectations,
  error: r.error,
  conversation: r.conversation ?? null,
  call: r.call,
  fields: r.fields ?? {},
  tools: r.tools ?? [],
})

/** A run without `results`: list items and the `simulation.finished` event's payload. */
export function presentRunOutline(run: RunDoc) {
  const durationMs = run.startedAt && run.finishedAt ? Date.parse(run.finishedAt) - Date.parse(run.startedAt) : null
  return {
    id: run.id,
    suite: run.suiteId,
    agent: run.agentId,
    target: run.target,
    count: run.count,
    seed: run.seed,
    webhooks: run.webhooks,
    status: run.status,
    passed: run.status === 'done' ? run.failed === 0 : null,
    totals: { calls: run.total, finished: run.finished, passed: run.passed, failed: run.failed },
    durationMs,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
  }
}

/** A run as GET answers it, with its results (none yet for a run just queued). */
export function presentRun(run: RunDoc, results?: ResultDoc[]) {
  return { ...presentRunOutline(run), results: (results ?? []).map(presentResult) }
}
