/**
 * The console app's simulations: the workspace's suites (with their agent's name), a suite's runs,
 * one run with its results per call and expectation, "Run against draft", "Make a test from this
 * call" and a replayed caller's turns as audio — the same service the v1 API calls
 * (docs/api/simulations.md), under the console token.
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { wavOf } from '../../voice/public'
import type { AgentService } from '../agents/public'
import { presentRun, presentRunOutline, presentScenario, presentSuite, Run, RunBody, RunOutline, Scenario, type SimulationsServices, Suite } from '../simulations/public'

export interface SimulationReadsDeps {
  auth: KernelHttp['console']
  simulations: SimulationsServices['simulations']
  agents: Pick<AgentService, 'list'>
}

const SuiteRow = t.Composite([Suite, t.Object({ agentName: t.Union([t.String(), t.Null()], { description: 'null when the agent is gone' }) })])

const RunWithSuite = t.Composite([
  Run,
  t.Object({
    suiteName: t.Union([t.String(), t.Null()], { description: 'null once the suite is deleted' }),
    replayed: t.Record(t.String(), t.Array(t.Boolean()), { description: 'each scenario from a call: per line, whether it plays the call’s recorded caller audio' }),
  }),
])

export function consoleSimulationReads(d: SimulationReadsDeps) {
  const sims = d.simulations
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(d.auth)
    .get(
      '/workspaces/:ws/simulations/suites',
      async ({ query, workspace }) => {
        const names = new Map((await d.agents.list(workspace.id, 100, null)).map((a) => [a.id, a.name]))
        return paginate(
          (limit, after) => sims.suites(workspace, limit, after),
          query,
          100,
          (s) => ({ ...presentSuite(s), agentName: names.get(s.agentId) ?? null }),
        )
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        query: t.Object(pageQuery(100, 100)),
        detail: { summary: "The workspace's simulation suites with their agent's name, newest first", responses: answers({ 200: pageSchema(SuiteRow), ...consoleErrors(400, 404) }) },
      },
    )
    .get(
      '/workspaces/:ws/simulations/suites/:id/runs',
      async ({ params, query, workspace }) => {
        await sims.suite(workspace, params.id)
        return paginate(
          (limit, after) => sims.runs(workspace, params.id, limit, after),
          query,
          10,
          (r) => presentRunOutline(r),
        )
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        query: t.Object(pageQuery(100, 10)),
        detail: { summary: "A suite's runs, newest first (without their results)", responses: answers({ 200: pageSchema(RunOutline), ...consoleErrors(400, 404) }) },
      },
    )
    .get(
      '/workspaces/:ws/simulations/runs/:id',
      async ({ params, workspace }) => {
        const { run, results } = await sims.run(workspace, params.id)
        // A deleted suite's runs stay readable (docs/api/simulations.md): its name is then null.
        const suite = await sims.suite(workspace, run.suiteId).catch(() => null)
        const replayed = Object.fromEntries(run.scenarios.filter((s) => s.replayOf).map((s) => [s.id, (s.caller.lines ?? []).map((l) => l.audio !== undefined)]))
        return { ...presentRun(run, results), suiteName: suite?.name ?? null, replayed }
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        detail: {
          summary: 'One run with its results per call and expectation (passed, evidence), each call with its id and recording',
          responses: answers({ 200: RunWithSuite, ...consoleErrors(404) }),
        },
      },
    )
    .post(
      '/workspaces/:ws/simulations/suites/:id/runs',
      async ({ params, body, set, workspace }) => {
        const run = await sims.startRun(workspace, params.id, body)
        set.status = 202
        return presentRun(run)
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        body: RunBody,
        detail: {
          summary: 'Run a suite against the draft or a version (the console app\'s "Run against draft"); 202 with the run, queued',
          responses: answers({ 202: Run, ...consoleErrors(400, 404, 409) }),
        },
      },
    )
    .get(
      '/workspaces/:ws/simulations/runs/:id/replayed/:scenario/:line',
      async ({ params, workspace }) => {
        const pcm = await sims.replayedTurn(workspace, params.id, params.scenario, params.line)
        return new Response(new Uint8Array(wavOf(pcm)), { headers: { 'content-type': 'audio/wav' } })
      },
      {
        params: t.Object({ ws: t.String(), id: t.String(), scenario: t.String(), line: t.Integer({ minimum: 0 }) }),
        workspace: true,
        detail: {
          summary: "A replayed caller's line in a run: the stretch of the call's recorded caller audio it played (WAV); 404 naming why once the recording is gone",
          responses: {
            ...answers(consoleErrors(400, 404)),
            200: { description: "the line's audio: 8 kHz 16-bit mono WAV", content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } } },
          },
        },
      },
    )
    .post(
      '/workspaces/:ws/simulations/scenarios',
      async ({ body, set, workspace }) => {
        set.status = 201
        return presentScenario(await sims.createScenario(workspace, { fromCall: body.fromCall }))
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object({ fromCall: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        detail: {
          summary: '"Make a test from this call": a scenario whose caller replays the call (as POST /v1/simulations/scenarios with fromCall)',
          responses: answers({ 201: Scenario, ...consoleErrors(400, 404, 409) }),
        },
      },
    )
}
