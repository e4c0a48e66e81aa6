/**
 * Simulations (docs/api/simulations.md): scenarios and suites of a workspace, runs of a suite
 * against the agent's draft or a version, and the publish gate. A run's state lives in its actor
 * (machines/simulation-run.ts); the run row is its projection, the results are the runner's rows.
 */

import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { clashes, invalid, notBlank, notThere } from '../../kernel/refusals'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { PageAfter } from '../../store/port'
import type { AgentDoc, AgentService } from '../agents/public'
import type { SimulationRunActors } from './actor'
import { compareRuns } from './compare'
import type { ExpectationSpec, ScenarioInput, SuiteInput } from './model'
import { type ResultDoc, type RunDoc, type ScenarioDoc, type SimulationStore, type SuiteDoc, simulationsIn, type WorkspaceSimulations } from './repository'

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
}

const NEEDS: Record<ExpectationSpec['kind'], (keyof ExpectationSpec)[]> = {
  field: ['name'],
  says: ['text'],
  neverSays: ['text'],
  tool: ['name'],
  ended: ['by'],
  maxTurns: ['turns'],
  slowestTurn: ['ms'],
}
const ALL_MEMBERS: (keyof ExpectationSpec)[] = ['name', 'equals', 'oneOf', 'text', 'by', 'turns', 'ms']

/** The members each expectation kind takes, checked by name (the schema allows each on every kind). */
function checkExpectations(list: ExpectationSpec[]): void {
  list.forEach((e, i) => {
    const at = `expectations[${i}]`
    for (const member of NEEDS[e.kind]) if (e[member] === undefined) throw invalid(`${at}.${member}`, `is required for kind ${e.kind}`)
    const allowed = new Set<keyof ExpectationSpec>([...NEEDS[e.kind], ...(e.kind === 'field' ? (['equals', 'oneOf'] as const) : [])])
    for (const member of ALL_MEMBERS) if (e[member] !== undefined && !allowed.has(member)) throw invalid(`${at}.${member}`, `does not apply to kind ${e.kind}`)
    if (e.kind === 'field' && (e.equals === undefined) === (e.oneOf === undefined)) throw invalid(`${at}.equals`, 'give either equals or oneOf for a field')
    if ((e.kind === 'says' || e.kind === 'neverSays') && e.text!.trim() === '') throw invalid(`${at}.text`, 'must not be blank')
  })
}

/** Keys a caller line may press: the keypad's (keypad.ts), as many as an agent's send_digits takes. */
const DIGITS = /^[0-9*#A-D]{1,32}$/
/** Text the sandbox callee reads as a marker rather than words (sandbox-callee.ts): a said line may not start with it. */
const MARKER = /^(?:[>~]|\[(?:keypad|menu|wait|after)\b)/i

/** Line members only a phone caller has: a website visitor writes its lines, one after each answer. */
const PHONE_ONLY = ['digits', 'waitMs', 'interrupt', 'noise', 'afterMs'] as const

type CallerLineInput = NonNullable<ScenarioInput['caller']['lines']>[number]

/** A caller is scripted (`lines`) or a persona a vendor model plays (`persona` and `goal`), never both. */
function checkCaller(caller: ScenarioInput['caller'], channel: ScenarioDoc['channel']): void {
  const personaOnly = (['goal', 'maxTurns', 'opening'] as const).filter((m) => caller[m] !== undefined)
  if (caller.lines !== undefined && caller.persona !== undefined) throw invalid('caller.persona', 'a caller is scripted (lines) or a persona, not both')
  if (caller.lines !== undefined) {
    if (personaOnly.length > 0) throw invalid(`caller.${personaOnly[0]}`, 'applies only to a persona caller (caller.persona), not to scripted lines')
    checkLines(caller.lines, channel)
    return
  }
  if (caller.persona === undefined) throw invalid('caller.lines', 'is required (or caller.persona with caller.goal, for a caller a model plays)')
  if (caller.persona.trim() === '') throw invalid('caller.persona', 'must not be blank')
  if (caller.goal === undefined) throw invalid('caller.goal', 'is required with caller.persona: what the caller wants done, so the model knows when to hang up')
  if (caller.goal.trim() === '') throw invalid('caller.goal', 'must not be blank')
  if (caller.opening !== undefined && caller.opening.trim() === '') throw invalid('caller.opening', 'must not be blank')
  if (caller.opening !== undefined && MARKER.test(caller.opening.trim()))
    throw invalid('caller.opening', 'must not start with >, ~, [keypad], [menu], [wait] or [after] (the sandbox caller’s markers)')
}

function checkLines(lines: CallerLineInput[], channel: ScenarioDoc['channel']): void {
  lines.forEach((l, i) => {
    const at = `caller.lines[${i}]`
    if (channel !== 'phone') {
      for (const member of PHONE_ONLY)
        if (l[member] !== undefined)
          throw invalid(`${at}.${member}`, `applies only to channel phone; a ${channel === 'web' ? 'website visitor' : 'chat-app customer'} writes each line once the agent has answered`)
    }
    const what = [l.say !== undefined && 'say', l.digits !== undefined && 'digits', l.noise && 'noise'].filter(Boolean)
    if (what.length === 0) throw invalid(`${at}.say`, 'is required (or digits, or noise: true)')
    if (what.length > 1) throw invalid(`${at}.${what[1]}`, `a line is one of say, digits or noise, not ${what.join(' and ')}`)
    if (l.say !== undefined && l.say.trim() === '') throw invalid(`${at}.say`, 'must not be blank')
    if (l.say !== undefined && MARKER.test(l.say.trim()))
      throw invalid(`${at}.say`, 'must not start with >, ~, [keypad], [menu], [wait] or [after] (the sandbox caller’s markers); use interrupt, noise, digits, waitMs or afterMs')
    if (l.digits !== undefined && !DIGITS.test(l.digits)) throw invalid(`${at}.digits`, '1–32 keypad keys: 0-9, *, #, A-D')
    if (l.noise && l.interrupt !== undefined) throw invalid(`${at}.interrupt`, 'a noise line is always over the agent: no interrupt')
    if (l.digits !== undefined && l.interrupt) throw invalid(`${at}.interrupt`, 'only a said line interrupts; keys are pressed in turn')
    const over = l.noise || l.interrupt
    if (over && l.waitMs !== undefined) throw invalid(`${at}.waitMs`, 'does not apply to a line over the agent (interrupt or noise); afterMs says when it starts')
    if (!over && l.afterMs !== undefined) throw invalid(`${at}.afterMs`, 'applies only to a line over the agent (interrupt: true or noise: true); waitMs sets the pause before a line in turn')
  })
  if (lines.every((l) => l.noise)) throw invalid('caller.lines', 'needs at least one line that says something or presses keys')
}

/** A caller line as the sandbox callee reads it (sandbox-callee.ts markers). */
export function calleeLine(l: CallerLineInput): string {
  if (l.noise) return l.afterMs !== undefined ? `~ [after ${l.afterMs}]` : '~'
  if (l.interrupt) return `> ${l.afterMs !== undefined ? `[after ${l.afterMs}] ` : ''}${l.say!.trim()}`
  const words = l.digits !== undefined ? `[keypad] ${l.digits}` : l.say!.trim()
  return l.waitMs !== undefined ? `[wait ${l.waitMs}] ${words}` : words
}

export class SimulationService {
  constructor(private readonly d: SimulationServiceDeps) {}

  private in(workspaceId: string): WorkspaceSimulations {
    return simulationsIn(this.d.store, workspaceId)
  }

  // Scenarios

  async createScenario(workspace: WorkspaceDoc, body: ScenarioInput): Promise<ScenarioDoc> {
    const fields = this.scenarioFields(body)
    await this.checkPersonaModel(workspace, body)
    const now = iso(this.d.clock.now())
    return this.in(workspace.id).scenarios.insert({ id: newId('scn'), ...fields, createdAt: now, updatedAt: now })
  }

  async replaceScenario(workspace: WorkspaceDoc, id: string, body: ScenarioInput): Promise<ScenarioDoc> {
    const doc = await this.scenario(workspace, id)
    const fields = this.scenarioFields(body)
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

  private scenarioFields(body: ScenarioInput) {
    notBlank(body.name, 'name')
    const channel = body.channel ?? 'phone'
    checkCaller(body.caller, channel)
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

  runs(workspace: WorkspaceDoc, suiteId: string | undefined, limit: number, after: PageAfter | null): Promise<RunDoc[]> {
    return this.in(workspace.id).runs.page(suiteId ? { suiteId } : {}, limit, after)
  }

  /** GET /simulations/runs/{id}/compare?with=: two runs of one suite, call by call (compare.ts). */
  async compare(workspace: WorkspaceDoc, id: string, other: string) {
    const a = await this.run(workspace, id)
    const b = await this.run(workspace, other).catch(() => {
      throw invalid('with', `no run ${other} in this workspace`)
    })
    if (a.run.suiteId !== b.run.suiteId) throw invalid('with', `run ${other} is of suite ${b.run.suiteId}, not ${a.run.suiteId}: only runs of one suite compare`)
    return { a: a.run, b: b.run, ...compareRuns(a, b) }
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
