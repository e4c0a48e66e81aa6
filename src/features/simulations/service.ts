/**
 * Simulations (docs/api/simulations.md): scenarios and suites of a workspace, runs of a suite
 * against the agent's draft or a version, and the publish gate. A run's state lives in its actor
 * (machines/simulation-run.ts); the run row is its projection, the results are the runner's rows.
 */

import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, notBlank, notThere } from '../../refusals'
import type { PageAfter } from '../../store/port'
import type { AgentDoc, AgentService } from '../agents/public'
import type { SimulationRunActors } from './actor'
import { compareRuns } from './compare'
import type { ScenarioCreateInput, ScenarioInput, SuiteInput } from './model'
import type { CallReplays } from './replay'
import { type ResultDoc, type RunDoc, type ScenarioDoc, type SimulationStore, type SuiteDoc, simulationsIn, type WorkspaceSimulations } from './repository'
import { checkCaller, checkExpectations } from './scenario-checks'

export interface SimulationServiceDeps {
  store: SimulationStore
  agents: Pick<AgentService, 'get'>
  /** Whether version `number` of the agent exists (live or not). */
  hasVersion: (workspaceId: string, agentId: string, number: number) => Promise<boolean>
  draftFingerprint: (agent: AgentDoc) => Promise<string>
  /** Whether a vendor model (not `local`) is in the workspace's reach: the service's keys or its own (BYOK). */
  vendorModels: (workspace: WorkspaceDoc) => Promise<boolean>
  /** The model that plays a run's persona callers: the target agent's own, as its conversations resolve it; throws as they would. */
  callerModel: (workspace: WorkspaceDoc, agentId: string, target: 'draft' | number) => Promise<{ provider: string; id: string } | null>
  /** Whether calls go out on the sandbox network, where scripted callers live. */
  simulates: () => boolean
  clock: Clock
  actors: () => SimulationRunActors
  /** Scenarios made from calls: their caller cut from the call's recording. */
  replays: Pick<CallReplays, 'scenario' | 'audio'>
}

export class SimulationService {
  constructor(private readonly d: SimulationServiceDeps) {}

  private in(workspaceId: string): WorkspaceSimulations {
    return simulationsIn(this.d.store, workspaceId)
  }

  // Scenarios

  async createScenario(workspace: WorkspaceDoc, body: ScenarioCreateInput): Promise<ScenarioDoc> {
    const now = iso(this.d.clock.now())
    const { fromCall, ...written } = body
    if (fromCall !== undefined) return this.scenarioFromCall(workspace, fromCall, written, now)
    if (written.name === undefined) throw invalid('name', 'is required')
    if (written.caller === undefined) throw invalid('caller', 'is required (or fromCall: a call whose caller is replayed)')
    const input = { ...written, name: written.name, caller: written.caller }
    const fields = this.scenarioFields(input, null)
    await this.checkPersonaModel(workspace, input)
    return this.in(workspace.id).scenarios.insert({ id: newId('scn'), ...fields, createdAt: now, updatedAt: now })
  }

  /** A scenario whose caller replays call `callId` (replay.ts); its expectations start as given (none by default). */
  private async scenarioFromCall(workspace: WorkspaceDoc, callId: string, body: Omit<ScenarioCreateInput, 'fromCall'>, now: string): Promise<ScenarioDoc> {
    if (body.caller !== undefined) throw invalid('caller', 'comes from the call (fromCall); give one or the other')
    if (body.channel !== undefined && body.channel !== 'phone') throw invalid('channel', 'a scenario from a call is a phone call')
    const made = await this.d.replays.scenario(workspace.id, callId.trim())
    const fields = this.scenarioFields({ ...body, name: body.name ?? `Replay of call ${made.replayOf.callId}`, caller: made.caller }, made.replayOf.callId)
    return this.in(workspace.id).scenarios.insert({ id: newId('scn'), ...fields, replayOf: made.replayOf, suggestedExpectations: made.suggestedExpectations, createdAt: now, updatedAt: now })
  }

  async replaceScenario(workspace: WorkspaceDoc, id: string, body: ScenarioInput): Promise<ScenarioDoc> {
    const doc = await this.scenario(workspace, id)
    const fields = this.scenarioFields(body, doc.replayOf?.callId ?? null)
    await this.checkPersonaModel(workspace, body)
    const next = { ...doc, ...fields, updatedAt: iso(this.d.clock.now()) }
    await this.in(workspace.id).scenarios.replace(next)
    return next
  }

  async scenario(workspace: WorkspaceDoc, id: string): Promise<ScenarioDoc> {
    const doc = await this.in(workspace.id).scenarios.get(id)
    if (!doc) throw notThere(`no scenario ${id} in this workspace`)
    return doc
  }

  scenarios(workspace: WorkspaceDoc, limit: number, after: PageAfter | null): Promise<ScenarioDoc[]> {
    return this.in(workspace.id).scenarios.page({}, limit, after)
  }

  /** 409 while a suite holds it (naming the suite): a suite's list stays whole. */
  async deleteScenario(workspace: WorkspaceDoc, id: string): Promise<void> {
    await this.scenario(workspace, id)
    const holder = (await this.in(workspace.id).suites.find()).find((s) => s.scenarios.includes(id))
    if (holder) throw clashes(`scenario ${id} is in suite ${holder.id} (${holder.name}); take it out of the suite first`, { suite: holder.id })
    await this.in(workspace.id).scenarios.delete(id)
  }

  /** A persona caller needs a vendor model somewhere in the workspace's reach: the `local` model plays scripted callers only. */
  private async checkPersonaModel(workspace: WorkspaceDoc, body: ScenarioInput): Promise<void> {
    if (body.caller.persona === undefined || (await this.d.vendorModels(workspace))) return
    throw invalid(
      'caller.persona',
      'a persona caller is played by a vendor model (OpenAI or Anthropic), and only the local model is available here (no OPENAI_API_KEY or ANTHROPIC_API_KEY on the service, no BYOK keys on the workspace); script the caller with lines instead',
    )
  }

  private scenarioFields(body: ScenarioInput, replayOf: string | null) {
    notBlank(body.name, 'name')
    const channel = body.channel ?? 'phone'
    if (replayOf && channel !== 'phone') throw invalid('channel', 'a scenario from a call is a phone call')
    checkCaller(body.caller, channel, replayOf)
    const expectations = body.expectations ?? []
    checkExpectations(expectations)
    for (const name of Object.keys(body.variables ?? {})) if (name.trim() === '') throw invalid('variables', 'names must not be blank')
    return { name: body.name.trim(), channel, caller: body.caller, variables: body.variables ?? {}, expectations }
  }

  // Suites

  async createSuite(workspace: WorkspaceDoc, body: SuiteInput): Promise<SuiteDoc> {
    const now = iso(this.d.clock.now())
    const fields = await this.suiteFields(workspace, body, null)
    return this.in(workspace.id).suites.insert({ id: newId('sui'), ...fields, createdAt: now, updatedAt: now })
  }

  async replaceSuite(workspace: WorkspaceDoc, id: string, body: SuiteInput): Promise<SuiteDoc> {
    const doc = await this.suite(workspace, id)
    const next = { ...doc, ...(await this.suiteFields(workspace, body, id)), updatedAt: iso(this.d.clock.now()) }
    await this.in(workspace.id).suites.replace(next)
    return next
  }

  async suite(workspace: WorkspaceDoc, id: string): Promise<SuiteDoc> {
    const doc = await this.in(workspace.id).suites.get(id)
    if (!doc) throw notThere(`no suite ${id} in this workspace`)
    return doc
  }

  suites(workspace: WorkspaceDoc, limit: number, after: PageAfter | null): Promise<SuiteDoc[]> {
    return this.in(workspace.id).suites.page({}, limit, after)
  }

  async deleteSuite(workspace: WorkspaceDoc, id: string): Promise<void> {
    await this.suite(workspace, id)
    await this.in(workspace.id).suites.delete(id)
  }

  private async suiteFields(workspace: WorkspaceDoc, body: SuiteInput, self: string | null) {
    notBlank(body.name, 'name')
    const agent = await this.d.agents.get(workspace.id, body.agent).catch(() => null)
    if (!agent) throw invalid('agent', `no agent ${body.agent} in this workspace`)
    const seen = new Set<string>()
    for (const [i, id] of body.scenarios.entries()) {
      if (seen.has(id)) throw invalid(`scenarios[${i}]`, `${id} is listed twice`)
      seen.add(id)
      if (!(await this.in(workspace.id).scenarios.get(id))) throw invalid(`scenarios[${i}]`, `no scenario ${id} in this workspace`)
    }
    const required = body.requiredToPublish ?? false
    if (required) {
      // One gate per agent: two required suites would make "the latest run" ambiguous.
      const other = (await this.in(workspace.id).suites.find({ agentId: agent.id, requiredToPublish: true })).find((s) => s.id !== self)
      if (other) throw clashes(`suite ${other.id} (${other.name}) is already required to publish agent ${agent.id}; turn it off there first`, { suite: other.id })
    }
    return { name: body.name.trim(), agentId: agent.id, scenarios: body.scenarios, requiredToPublish: required }
  }

  // Runs

  /** POST /simulations/suites/{id}/runs: the run is stored and its actor spawned and started (202). */
  async startRun(workspace: WorkspaceDoc, suiteId: string, body: { target: 'draft' | number; count?: number; seed?: number; webhooks?: boolean }): Promise<RunDoc> {
    const suite = await this.suite(workspace, suiteId)
    const agent = await this.d.agents.get(workspace.id, suite.agentId).catch(() => null)
    if (!agent) throw clashes(`the suite's agent ${suite.agentId} is gone`)
    if (body.target !== 'draft' && !(await this.d.hasVersion(workspace.id, agent.id, body.target))) throw invalid('target', `agent ${agent.id} has no version ${body.target}`)
    const mine = this.in(workspace.id)
    const scenarios: ScenarioDoc[] = []
    for (const id of suite.scenarios) {
      const s = await mine.scenarios.get(id)
      if (!s) throw clashes(`the suite's scenario ${id} is gone; edit the suite`)
      scenarios.push(s)
    }
    if (scenarios.some((s) => s.channel === 'phone') && !this.d.simulates()) {
      throw clashes('simulated callers live on the sandbox phone network; this service places calls on another (TELEPHONY_PROVIDER)')
    }
    const persona = scenarios.find((s) => s.caller.persona !== undefined)
    if (persona) {
      const model = await this.d.callerModel(workspace, agent.id, body.target)
      if (!model || model.provider === 'local') {
        throw clashes(
          `scenario ${persona.id} (${persona.name}) has a caller.persona, played by the agent’s model, and ${agent.id}’s ${body.target === 'draft' ? 'draft' : `version ${body.target}`} runs on the local model, which plays scripted callers only; choose a vendor model for the agent or script the caller with lines`,
          { scenario: persona.id, field: 'caller.persona' },
        )
      }
    }
    const count = body.count ?? 1
    const now = this.d.clock.now()
    const run: RunDoc = {
      id: newId('srun'),
      workspaceId: workspace.id,
      suiteId: suite.id,
      agentId: agent.id,
      target: body.target,
      count,
      seed: body.seed ?? 1,
      webhooks: body.webhooks ?? false,
      scenarios,
      draftHash: body.target === 'draft' ? await this.d.draftFingerprint(agent) : null,
      status: 'queued',
      total: scenarios.length * count,
      finished: 0,
      passed: 0,
      failed: 0,
      createdAt: iso(now),
      startedAt: null,
      finishedAt: null,
    }
    const results: ResultDoc[] = scenarios.flatMap((s, si) =>
      Array.from({ length: count }, (_, k) => {
        const index = si * count + k
        return {
          id: `${run.id}:${index}`,
          runId: run.id,
          workspaceId: workspace.id,
          index,
          scenarioId: s.id,
          name: s.name,
          instance: k + 1,
          status: 'pending' as const,
          callId: null,
          attempts: 0,
          transcript: [],
          expectations: [],
          error: null,
          call: null,
        }
      }),
    )
    await Promise.all(results.map((r) => mine.results.insert(r)))
    await mine.runs.insert(run)
    const actors = this.d.actors()
    await actors.spawn(run.id, { id: run.id, total: run.total })
    await actors.send(run.id, { type: 'run.start', at: now })
    return run
  }

  async run(workspace: WorkspaceDoc, id: string): Promise<{ run: RunDoc; results: ResultDoc[] }> {
    const mine = this.in(workspace.id)
    const run = await mine.runs.get(id)
    if (!run) throw notThere(`no run ${id} in this workspace`)
    return { run, results: await mine.results.find({ runId: id }, { sort: [['index', 1]] }) }
  }

  /**
   * The caller's audio a replayed scenario's line `line` played in run `runId` (the line as the run
   * froze it, 8 kHz): 404 for a line that plays none, or naming why once the recording is gone.
   */
  async replayedTurn(workspace: WorkspaceDoc, runId: string, scenarioId: string, line: number): Promise<Int16Array> {
    const { run } = await this.run(workspace, runId)
    const scenario = run.scenarios.find((s) => s.id === scenarioId)
    const audio = scenario?.replayOf ? scenario.caller.lines?.[line]?.audio : undefined
    if (!scenario?.replayOf || !audio) throw notThere(`run ${runId} replayed no recorded caller audio for line ${line} of scenario ${scenarioId}`)
    const heard = await this.d.replays.audio(workspace.id, scenario.replayOf)
    if ('gone' in heard) throw notThere(heard.gone)
    return heard.pcm.slice(audio.fromMs * 8, audio.toMs * 8)
  }

  runs(workspace: WorkspaceDoc, suiteId: string | undefined, limit: number, after: PageAfter | null): Promise<RunDoc[]> {
    return this.in(workspace.id).runs.page(suiteId ? { suiteId } : {}, limit, after)
  }

  /** GET /simulations/runs/{id}/compare?with=: two runs of one suite, call by call (compare.ts). */
  async compare(workspace: WorkspaceDoc, id: string, other: string, noiseMs?: number) {
    const a = await this.run(workspace, id)
    const b = await this.run(workspace, other).catch(() => {
      throw invalid('with', `no run ${other} in this workspace`)
    })
    if (a.run.suiteId !== b.run.suiteId) throw invalid('with', `run ${other} is of suite ${b.run.suiteId}, not ${a.run.suiteId}: only runs of one suite compare`)
    return { a: a.run, b: b.run, ...compareRuns(a, b, noiseMs) }
  }

  /** POST /simulations/runs/{id}/cancel: 409 naming the state when it is over. */
  async cancel(workspace: WorkspaceDoc, id: string): Promise<RunDoc> {
    await this.run(workspace, id)
    const actors = this.d.actors()
    const asked = await actors.ask(id, { type: 'run.cancel', at: this.d.clock.now() })
    if (!asked.ok) throw clashes(asked.refusal.message, { state: asked.refusal.state })
    await actors.settle(id)
    return (await this.in(workspace.id).runs.get(id))!
  }

  /**
   * The publish gate (VersionService.gatePublish): with a suite required to publish, the draft's
   * latest run of it must be done and passed, and of the draft as it is now. 409 otherwise, naming
   * the run (or saying there is none).
   */
  async gate(agent: AgentDoc, draftHash: string): Promise<void> {
    const mine = this.in(agent.workspaceId)
    const [suite] = await mine.suites.find({ agentId: agent.id, requiredToPublish: true }, { limit: 1 })
    if (!suite) return
    const [latest] = await mine.runs.find(
      { suiteId: suite.id, target: 'draft' },
      {
        sort: [
          ['createdAt', -1],
          ['id', -1],
        ],
        limit: 1,
      },
    )
    const refuse = (why: string, run?: string) => {
      throw clashes(`publishing ${agent.id} needs a passing run of suite ${suite.id} (${suite.name}) against the draft: ${why}`, { suite: suite.id, ...(run ? { run } : {}) })
    }
    if (!latest) return refuse('it has never run against the draft (POST /simulations/suites/{id}/runs with target draft)')
    if (latest.status !== 'done') return refuse(`the latest run ${latest.id} is ${latest.status}`, latest.id)
    if (latest.failed > 0) return refuse(`the latest run ${latest.id} failed (${latest.failed} of ${latest.total} calls)`, latest.id)
    if (latest.draftHash !== draftHash) return refuse(`the draft changed after the latest run ${latest.id}; run the suite again`, latest.id)
  }
}
