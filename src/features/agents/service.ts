/**
 * Agents (docs/spec.md Agent, Agents endpoints): the rules of every field, the plan's agent
 * allowance, and a delete that cascades through whoever registered for it.
 */

import { PLANS, type PlanId } from '../../catalog/plans'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, notBlank, notThere } from '../../refusals'
import type { PageAfter } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import { DEFAULT_DIALS } from '../../voice/public'
import type { AgentNumbers } from './agent-numbers'
import { newAgentDoc } from './defaults'
import { checkFlux, NO_FLUX } from './flux-settings'
import type { Agent, CreateAgent, PatchAgent } from './model'
import type { AgentDoc, AgentRepo, StoredVoice } from './repository'
import { checkCollectFieldNames, checkLanguage, checkModelChange, checkTransfers, checkVoice, clampReplyTokens, clampTemperature } from './rules'
import { checkAssemblyAi } from './stt-settings'
import { checkInterruptions, withDials } from './voice-dials'
import { checkVoicemailMessage } from './voicemail'

export interface Tenant {
  workspace: WorkspaceDoc
  /** The plan that governs the workspace: the developer's, for a customer too. */
  plan: PlanId
}

/** Runs when an agent is deleted, so its conversations, knowledge and channels go with it. */
export type AgentCascade = (agent: AgentDoc) => Promise<void>

/** Runs after an agent is edited (PATCH), e.g. so its publication knows the draft changed. */
export type AgentEdited = (agent: AgentDoc) => Promise<void>

type Input = Partial<CreateAgent>

export class AgentService {
  private readonly cascades: AgentCascade[] = []
  private readonly edited: AgentEdited[] = []
  /** The agents of one workspace; `agents` itself only where an id comes without one (and the kept public view). */
  private readonly scoped: WorkspaceCollection<AgentDoc>

  constructor(
    private readonly agents: AgentRepo,
    private readonly clock: Clock,
    private readonly defaultModel: string,
    private readonly numbers: AgentNumbers,
  ) {
    this.scoped = new WorkspaceCollection(agents)
  }

  onDelete(cascade: AgentCascade): void {
    this.cascades.push(cascade)
  }

  onPatch(listener: AgentEdited): void {
    this.edited.push(listener)
  }

  async create(tenant: Tenant, input: CreateAgent): Promise<AgentDoc> {
    const allowance = PLANS[tenant.plan].agents
    const agents = this.scoped.in(tenant.workspace.id)
    const held = await agents.count()
    if (held >= allowance) throw clashes(`the ${tenant.plan} plan allows ${allowance} agents per workspace and all are in use`)
    const now = iso(this.clock.now())
    const base = newAgentDoc(tenant.workspace.id, input.name, this.defaultModel, now)
    // On create every given value is a change, so the model rule applies to an explicit model.
    const doc = this.apply(base, input, tenant.plan, input.model !== undefined)
    await agents.insert(doc)
    doc.legacyNumber = await this.numbers.numberOf(doc)
    return doc
  }

  /** Agents in a workspace (a customer's counts). */
  countIn(workspaceId: string): Promise<number> {
    return this.scoped.in(workspaceId).count()
  }

  /** The agent's integer id on the legacy surface (claimed on first use for agents from before numbers). */
  legacyNumber(agent: AgentDoc): Promise<number> {
    return this.numbers.numberOf(agent)
  }

  /** The legacy number an agent id had, deleted agents included (legacy webhook payloads name agents by it). */
  legacyNumberOfId(agentId: string): Promise<number | null> {
    return this.numbers.numberOfId(agentId)
  }

  /**
   * An agent named on the legacy surface: its integer number, or its `ag_` id (a path takes
   * either). Another account's agent, a deleted one, or a number never given are the same 404.
   */
  async getLegacy(workspaceId: string, ref: string | number): Promise<AgentDoc> {
    const text = String(ref)
    if (!/^\d{1,15}$/.test(text)) return this.get(workspaceId, text)
    const id = await this.numbers.agentIdOf(workspaceId, Number(text))
    if (!id) throw notThere(`no agent ${text} in this account`)
    return this.get(workspaceId, id)
  }

  /** The agent, or 404: another workspace's agent and one being deleted are the same 404 as none. */
  async get(workspaceId: string, id: string): Promise<AgentDoc> {
    const doc = await this.stored(workspaceId, id)
    if (doc.deletingAt) throw notThere(`no agent ${id} in this workspace`)
    return doc
  }

  /**
   * The agent as `present(get(...))` would answer it, already serialised: the JSON is made once
   * per version of the stored document and kept beside it by the store (Collection.view), so a
   * read of an unchanged agent parses, copies and serialises nothing. The same 404s as `get`.
   */
  publicJson(workspaceId: string, id: string): string | Promise<string> {
    const seen = this.agents.view(id, publicView)
    return seen instanceof Promise ? seen.then((read) => publicJsonOf(workspaceId, id, read)) : publicJsonOf(workspaceId, id, seen)
  }

  /** The agent by id in whichever workspace holds it (inbound mail names only the agent), or null. */
  async find(id: string): Promise<AgentDoc | null> {
    const doc = await this.agents.get(id)
    return doc && !doc.deletingAt ? doc : null
  }

  /**
   * The agent a message is addressed to on a channel that names agents (`to`: an `ag_` id), or
   * the workspace's only agent when none is named (console inbound for email and web).
   */
  async addressed(workspaceId: string, to: string | null): Promise<AgentDoc> {
    if (to) {
      const agent = await this.get(workspaceId, to).catch(() => null)
      if (!agent) throw notThere(`no agent ${to} in this workspace`)
      return agent
    }
    const agents = await this.list(workspaceId, 2, null)
    if (agents.length !== 1) throw invalid('to', agents.length ? 'the workspace has several agents: name one (ag_…)' : 'the workspace has no agent')
    return agents[0]!
  }

  /** The agent whose website widget key this is (the widget's public routes name agents by it), or null. */
  async byWebKey(webKey: string): Promise<AgentDoc | null> {
    const doc = await this.agents.findOne({ webKey })
    return doc && !doc.deletingAt ? doc : null
  }

  /** Whether the agent is there (not deleted, not being deleted): what a slow create asks after storing. */
  async exists(workspaceId: string, id: string): Promise<boolean> {
    const doc = await this.scoped.in(workspaceId).get(id)
    return doc !== null && !doc.deletingAt
  }

  list(workspaceId: string, limit: number, after: PageAfter | null): Promise<AgentDoc[]> {
    return this.scoped.in(workspaceId).page({ deletingAt: null }, limit, after)
  }

  /**
   * Up to `limit` agents that answer the phone (voice on and a number attached), newest first: what
   * POST /calls chooses from when it names no agent, without reading every agent of a workspace
   * (up to 1,000 on enterprise) on every call.
   */
  phoneAgents(workspaceId: string, limit: number): Promise<AgentDoc[]> {
    return this.scoped.in(workspaceId).find(
      { deletingAt: null, 'voice.answersCalls': true, phoneNumber: { $ne: null } },
      {
        sort: [
          ['createdAt', -1],
          ['id', -1],
        ],
        limit,
      },
    )
  }

  async patch(tenant: Tenant, id: string, input: PatchAgent): Promise<AgentDoc> {
    const current = await this.get(tenant.workspace.id, id)
    const next = this.apply(current, input, tenant.plan, input.model !== undefined && input.model !== current.model)
    next.updatedAt = iso(this.clock.now())
    await this.scoped.in(tenant.workspace.id).replace(next)
    for (const listener of this.edited) await listener(next)
    return next
  }

  /**
   * Writes a version's fields back onto the agent (agent versions: rollback). No plan rules: the
   * values passed them when they were saved, and a rollback must restore them exactly.
   */
  async restore(workspaceId: string, id: string, fields: Partial<AgentDoc>, at: string): Promise<void> {
    const current = await this.get(workspaceId, id)
    await this.scoped.in(workspaceId).replace({ ...current, ...structuredClone(fields), id: current.id, updatedAt: at })
  }

  /**
   * Marks the agent as being deleted BEFORE any cascade runs, then cascades, then removes it. A
   * create that checked the agent, waited (a page fetch, a DNS lookup) and stored something asks
   * `exists` afterwards: either it stored before the cascade (which sweeps its row) or it asks
   * after the mark (and backs out) — nothing is left behind either way. A delete that failed
   * half-way can be repeated: the mark does not hide the agent from `remove` itself.
   */
  async remove(workspaceId: string, id: string): Promise<void> {
    const doc = await this.stored(workspaceId, id)
    const agents = this.scoped.in(workspaceId)
    if (!doc.deletingAt) await agents.update(doc.id, { deletingAt: iso(this.clock.now()) })
    for (const cascade of this.cascades) await cascade(doc)
    await agents.delete(doc.id)
  }

  private async stored(workspaceId: string, id: string): Promise<AgentDoc> {
    // Another workspace's agent is the same 404 as none at all (docs/spec.md Errors).
    const doc = await this.scoped.in(workspaceId).get(id)
    if (!doc) throw notThere(`no agent ${id} in this workspace`)
    return doc
  }

  /** The public shape: voice gains its read-only `surfaces` and `phoneNumber`. */
  present(doc: AgentDoc): Agent {
    return presentAgent(doc)
  }

  /** Called by the phone-numbers service when a voice number is attached to or taken from an agent. */
  async setPhoneNumber(agentId: string, number: string | null): Promise<void> {
    await this.agents.update(agentId, { phoneNumber: number })
  }

  private apply(current: AgentDoc, input: Input, plan: PlanId, modelChanged: boolean): AgentDoc {
    const next: AgentDoc = structuredClone(current)
    if (input.name !== undefined) next.name = notBlank(input.name, 'name')
    if (input.instructions !== undefined) next.instructions = input.instructions
    if (input.greeting !== undefined) next.greeting = input.greeting
    if (input.businessDescription !== undefined) next.businessDescription = input.businessDescription
    if (input.temperature !== undefined) next.temperature = clampTemperature(input.temperature)
    if (input.maxReplyTokens !== undefined) next.maxReplyTokens = clampReplyTokens(input.maxReplyTokens)
    if (input.language !== undefined) next.language = checkLanguage(input.language, 'language', true)
    if (input.secondLanguage !== undefined) {
      next.secondLanguage = input.secondLanguage === null ? null : checkLanguage(input.secondLanguage, 'secondLanguage', false)
    }
    if (input.escalation !== undefined) next.escalation = { ...next.escalation, ...input.escalation }
    if (input.captureLeads !== undefined) next.captureLeads = input.captureLeads
    if (input.scheduleCallbacks !== undefined) next.scheduleCallbacks = input.scheduleCallbacks
    if (input.transfers !== undefined) next.transfers = checkTransfers(input.transfers)
    if (input.steps !== undefined) next.steps = input.steps.map((s) => ({ title: s.title, detail: s.detail }))
    if (input.widget !== undefined) next.widget = { ...next.widget, ...input.widget }
    if (input.voice !== undefined) next.voice = this.applyVoice(next.voice, input.voice)
    if (input.collectFields !== undefined) {
      checkCollectFieldNames(input.collectFields)
      next.collectFields = input.collectFields.map((f) => ({
        name: f.name,
        type: f.type ?? 'text',
        description: f.description ?? null,
        choices: f.choices ?? null,
      }))
    }
    if (input.model !== undefined) next.model = modelChanged ? checkModelChange(input.model, plan, next.voice.answersCalls) : input.model
    return next
  }

  private applyVoice(current: StoredVoice, input: NonNullable<Input['voice']>): StoredVoice {
    const { surfaces: _s, phoneNumber: _p, ...given } = input
    const { patience, interruptions, assemblyai, ...plain } = given
    const next = { ...current, ...plain } as StoredVoice
    if (given.speed !== undefined) next.speed = given.speed === null ? null : Math.round(given.speed * 100) / 100
    if (patience !== undefined) next.patience = { ...(current.patience ?? DEFAULT_DIALS.patience), ...patience }
    if (assemblyai !== undefined) next.assemblyai = assemblyai === null ? null : checkAssemblyAi({ ...current.assemblyai, ...assemblyai })
    if (interruptions !== undefined) next.interruptions = checkInterruptions({ ...(current.interruptions ?? DEFAULT_DIALS.interruptions), ...interruptions })
    if (given.voice !== undefined) next.voice = checkVoice(given.voice)
    if (given.language !== undefined && given.language !== null) next.language = checkLanguage(given.language, 'voice.language', false)
    if (given.voicemailMessage !== undefined) next.voicemailMessage = checkVoicemailMessage(given.voicemailMessage)
    if (given.flux !== undefined) next.flux = checkFlux({ ...(current.flux ?? NO_FLUX), ...given.flux })
    return next
  }
}

/** The public shape: voice gains its read-only `surfaces` and `phoneNumber`. */
export function presentAgent(doc: AgentDoc): Agent {
  const phoneNumber = doc.phoneNumber ?? null
  const surfaces: ('web' | 'phone')[] = []
  if (doc.widget.enabled) surfaces.push('web')
  if (doc.voice.answersCalls && phoneNumber) surfaces.push('phone')
  const { workspaceId: _w, updatedAt: _u, phoneNumber: _p, deletingAt: _d, legacyNumber: _n, ...rest } = doc
  // Agents stored before `endpointingMs`, `voicemailMessage` or the dials existed read as the defaults.
  // Agents stored before transfers existed have none.
  return {
    ...rest,
    transfers: doc.transfers ?? [],
    voice: {
      ...withDials(doc.voice),
      endpointingMs: doc.voice.endpointingMs ?? null,
      assemblyai: doc.voice.assemblyai ?? null,
      flux: doc.voice.flux ?? NO_FLUX,
      voicemailMessage: doc.voice.voicemailMessage ?? null,
      surfaces,
      phoneNumber,
    },
  }
}

/** What a public read needs of a stored agent: whose it is, whether it is going, and its JSON. */
const publicView = (doc: AgentDoc) => ({ workspaceId: doc.workspaceId, deleting: Boolean(doc.deletingAt), json: JSON.stringify(presentAgent(doc)) })

/** The kept JSON of an agent seen by `publicJson`, or the 404 `get` gives. */
function publicJsonOf(workspaceId: string, id: string, seen: Readonly<ReturnType<typeof publicView>> | null): string {
  if (!seen || seen.workspaceId !== workspaceId || seen.deleting) throw notThere(`no agent ${id} in this workspace`)
  return seen.json
}
