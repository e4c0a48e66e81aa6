/**
 * Simulations, v1 (docs/api/simulations.md): scenarios, suites, runs. Building keys (`build` or
 * `full`) write, read keys read; a run is placed by a `build` key too (it costs nothing).
 */
import { Elysia, t } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, v1Errors } from '../../http/docs'
import { pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { CompareQuery, Comparison, ListQuery, Run, RunAccepted, RunBody, RunListQuery, RunOutline, Scenario, ScenarioBody, ScenarioCreateBody, Suite, SuiteBody } from './model'
import { presentRun, presentRunOutline, presentScenario, presentSuite } from './present'
import type { SimulationService } from './service'

const Id = t.Object({ id: t.String() })
const Deleted = t.Null({ description: 'deleted' })

export function simulationsV1(deps: { context: KernelHttp['v1']; simulations: SimulationService }) {
  const { simulations: sims } = deps
  return new Elysia({ prefix: '/simulations', detail: { tags: ['Simulations'] } })
    .use(deps.context)
    .post(
      '/scenarios',
      async ({ body, set, workspace }) => {
        set.status = 201
        return presentScenario(await sims.createScenario(workspace, body))
      },
      {
        scope: 'build',
        body: ScenarioCreateBody,
        detail: { summary: 'Create a scenario: a scripted caller, or a recorded call’s caller (fromCall), and what the call must show', responses: answers({ 201: Scenario, ...v1Errors(403, 409) }) },
      },
    )
    .get('/scenarios', ({ query, workspace }) => paginate((limit, after) => sims.scenarios(workspace, limit, after), query, 25, presentScenario), {
      query: ListQuery,
      detail: { summary: 'List scenarios, newest first', responses: answers({ 200: pageSchema(Scenario), ...v1Errors() }) },
    })
    .get('/scenarios/:id', async ({ params, workspace }) => presentScenario(await sims.scenario(workspace, params.id)), {
      params: Id,
      detail: { summary: 'One scenario', responses: answers({ 200: Scenario, ...v1Errors() }) },
    })
    .put('/scenarios/:id', async ({ params, body, workspace }) => presentScenario(await sims.replaceScenario(workspace, params.id, body)), {
      params: Id,
      scope: 'build',
      body: ScenarioBody,
      detail: { summary: 'Replace a scenario (runs already made keep what they played)', responses: answers({ 200: Scenario, ...v1Errors(403) }) },
    })
    .delete(
      '/scenarios/:id',
      async ({ params, set, workspace }) => {
        await sims.deleteScenario(workspace, params.id)
        set.status = 204
        return null
      },
      { params: Id, scope: 'build', detail: { summary: 'Delete a scenario; 409 while a suite lists it', responses: answers({ 204: Deleted, ...v1Errors(403, 409) }) } },
    )
    .post(
      '/suites',
      async ({ body, set, workspace }) => {
        set.status = 201
        return presentSuite(await sims.createSuite(workspace, body))
      },
      { scope: 'build', body: SuiteBody, detail: { summary: 'Create a suite: scenarios run against an agent', responses: answers({ 201: Suite, ...v1Errors(403, 409) }) } },
    )
    .get('/suites', ({ query, workspace }) => paginate((limit, after) => sims.suites(workspace, limit, after), query, 25, presentSuite), {
      query: ListQuery,
      detail: { summary: 'List suites, newest first', responses: answers({ 200: pageSchema(Suite), ...v1Errors() }) },
    })
    .get('/suites/:id', async ({ params, workspace }) => presentSuite(await sims.suite(workspace, params.id)), {
      params: Id,
      detail: { summary: 'One suite', responses: answers({ 200: Suite, ...v1Errors() }) },
    })
    .put('/suites/:id', async ({ params, body, workspace }) => presentSuite(await sims.replaceSuite(workspace, params.id, body)), {
      params: Id,
      scope: 'build',
      body: SuiteBody,
      detail: { summary: 'Replace a suite', responses: answers({ 200: Suite, ...v1Errors(403, 409) }) },
    })
    .delete(
      '/suites/:id',
      async ({ params, set, workspace }) => {
        await sims.deleteSuite(workspace, params.id)
        set.status = 204
        return null
      },
      { params: Id, scope: 'build', detail: { summary: 'Delete a suite (its runs stay readable)', responses: answers({ 204: Deleted, ...v1Errors(403) }) } },
    )
    .post(
      '/suites/:id/runs',
      async ({ params, body, set, workspace }) => {
        const run = await sims.startRun(workspace, params.id, body)
        set.status = 202
        return { id: run.id, status: run.status }
      },
      {
        params: Id,
        scope: 'build',
        body: RunBody,
        detail: {
          summary: 'Run the suite against the draft or a version',
          description: 'Answers 202 with the run id; GET /simulations/runs/{id} shows it move (queued, running, done or cancelled). 409 on another telephony provider than the sandbox network.',
          responses: answers({ 202: RunAccepted, ...v1Errors(403, 409) }),
        },
      },
    )
    .get(
      '/runs',
      ({ query, workspace }) =>
        paginate(
          (limit, after) => sims.runs(workspace, query.suite, limit, after),
          query,
          25,
          (r) => presentRunOutline(r),
        ),
      {
        query: RunListQuery,
        detail: { summary: 'List runs, newest first (without their results)', responses: answers({ 200: pageSchema(RunOutline), ...v1Errors() }) },
      },
    )
    .get(
      '/runs/:id',
      async ({ params, workspace }) => {
        const { run, results } = await sims.run(workspace, params.id)
        return presentRun(run, results)
      },
      { params: Id, detail: { summary: 'One run with its results per call and expectation', responses: answers({ 200: Run, ...v1Errors() }) } },
    )
    .get(
      '/runs/:id/compare',
      async ({ params, query, workspace }) => {
        const c = await sims.compare(workspace, params.id, query.with, query.timingMs)
        const side = (r: typeof c.a) => ({ id: r.id, target: r.target, status: r.status })
        return { a: side(c.a), b: side(c.b), same: c.same, differences: c.differences }
      },
      {
        params: Id,
        query: CompareQuery,
        detail: { summary: 'Compare two runs of one suite (two versions, or a version and the draft), call by call', responses: answers({ 200: Comparison, ...v1Errors() }) },
      },
    )
    .post(
      '/runs/:id/cancel',
      async ({ params, workspace }) => {
        const run = await sims.cancel(workspace, params.id)
        return presentRun(run, (await sims.run(workspace, run.id)).results)
      },
      {
        params: Id,
        scope: 'build',
        body: NoBody,
        detail: { summary: 'Cancel a run: no more calls start, calls in progress end', responses: answers({ 200: Run, ...v1Errors(403, 409) }) },
      },
    )
}
