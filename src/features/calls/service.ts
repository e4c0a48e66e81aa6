/**
 * Calls (docs/spec.md Calls endpoints and call-placing rules): placing a call (checked, rate-limited,
 * given a line, recorded, handed to its actor), reading one, listing them, ending or cancelling
 * one, and the totals. The call's status lives in its actor (control/actor.ts); the rows read here
 * are that actor's projection (records/projection.ts).
 */

import { TRANSFER_STATES } from '../../../machines/call'
import { isVoice, voiceTier } from '../../catalog/voices'
import { type Clock, iso } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { newId } from '../../ids'
import { checkInstant } from '../../instant'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, notThere, unavailable, upstreamFailed } from '../../refusals'
import type { PageAfter } from '../../store/port'
import type { ScopedFilter } from '../../store/workspace-scoped'
import type { AgentDoc, AgentService } from '../agents/public'
import type { ContactService } from '../contacts/public'
import { checkMetadata } from '../customers/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { Meter, UsageLedger } from '../usage/public'
import type { CallActors } from './control/actor'
import type { ListCallsQuery, PlaceCall } from './model'
import { type Admission, atCapacity, isRefusal, RETRY_AFTER_S, type Ticket } from './placing/admission'
import { LINE_TTL_MS } from './placing/ceilings'
import { firstRow } from './placing/first-row'
import { lineSets, takeLine } from './placing/lines'
import { callee, checkConsent, checkVariables, chooseAgent, chooseFrom, extractSpecs, PHONE_AGENTS_NAMED, scheduleTime } from './placing/placement-rules'
import type { RefusalCounts } from './placing/refusal-counts'
import { presentCall } from './records/present'
import { type CallSimulation, type CallTryDoc, type CallTryRepo, newestTry, triesIn, tryId } from './records/repository'
import { type CallTotals, callTotals, totalsWindowStart } from './records/totals'

// Agents of one workspace are at most its plan's allowance (1,000 on enterprise): read in pages of 100.
const AGENT_PAGE = 100
const MINUTE_MS = 60_000

/** A simulated call's callee: its script (sandbox-callee.ts prefixes) and the real time it may take. */
export interface SimulatedCaller {
  lines: string[]
  limitMs: number
  /** A caller whose lines are written as the call goes (a persona): its next line once the agent has answered, null to hang up. */
  more?: () => Promise<string | null>
  /** Recorded audio its `[clip N]` lines play (8 kHz): a replayed call's caller. */
  clips?: Int16Array[]
}

/** The agent as published (versions feature): what every call talks with. */
export interface PublishedAgents {
  /** 409 when nothing is published. */
  servingAgent(workspaceId: string, agentId: string): Promise<AgentDoc>
  /** null when the agent is gone or nothing is published. */
  live(workspaceId: string, agentId: string): Promise<AgentDoc | null>
  /** What the agent's version `number` froze, live or not; null when gone. */
  version(workspaceId: string, agentId: string, number: number): Promise<AgentDoc | null>
  /** The agent as published, with its version number; 409 when nothing is published. */
  served(workspaceId: string, agentId: string): Promise<{ agent: AgentDoc; version: { number: number } }>
}

export interface CallServiceDeps {
  tries: CallTryRepo
  agents: AgentService
  published: PublishedAgents
  contacts: ContactService
  numbers: PhoneNumberService
  coordination: Coordination
  clock: Clock
  meter: Pick<Meter, 'checkCall'>
  ledger: UsageLedger
  actors: CallActors
  /** Gives a simulated call's callee its script (the sandbox network's `expectCaller`). */
  simulatedCallers?: (callId: string, caller: SimulatedCaller) => void
  /** Whether the workspace's BYOK voice key offers a voice; null while BYOK is off for it. */
  byokOffersVoice?: (workspace: WorkspaceDoc, voice: string) => Promise<boolean | null>
  /** Whether this instance has room for another call (placing/admission.ts); absent, always. */
  admission?: Admission
  /** Counts each refusal for its workspace (placing/refusal-counts.ts). */
  refusals?: Pick<RefusalCounts, 'refused'>
}

/** The try's placement is decided: it was taken by the network (a callRef), or it left `ringing` (refused, or a booked call waiting). */
const placementDecided = (snapshot: { value: unknown; context: unknown }) => snapshot.value !== 'ringing' || (snapshot.context as { callRef: string | null }).callRef !== null

export class CallService {
  constructor(private readonly deps: CallServiceDeps) {}

  /** POST /calls: 202 `{ id, to, status }`; the refusals of docs/spec.md's table. */
  async place(workspace: WorkspaceDoc, body: PlaceCall): Promise<{ id: string; to: string; status: string }> {
    const now = this.deps.clock.now()
    const phone = callee(body.to)
    if (body.purpose.trim() === '') throw invalid('purpose', 'must not be blank')
    const scheduledFor = scheduleTime(body.scheduledFor, now)
    if (body.metadata) checkMetadata(body.metadata)
    const variables = checkVariables(body.variables ?? {})
    const extract = extractSpecs(body.extract)
    // A call that rings now needs room on this instance; refused here, before any store read, so
    // the 503 is quick and nothing was recorded. A booked call waits for room when it is due.
    const ticket = scheduledFor === null ? this.admit(workspace.id) : null
    try {
      const placed = await this.placeAdmitted(workspace, body, { now, phone, scheduledFor, variables, extract })
      ticket?.bind(placed.id)
      return placed
    } catch (err) {
      ticket?.release()
      throw err
    }
  }

  /** A ticket for a call that rings now (or a browser's, `web`), or the 503 (with Retry-After) saying the instance is at capacity. */
  private admit(workspaceId: string, direction: 'outbound' | 'web' = 'outbound'): Ticket | null {
    const admitted = this.deps.admission?.admit(direction) ?? null
    if (!admitted || !isRefusal(admitted)) return admitted
    this.deps.refusals?.refused(workspaceId, direction)
    throw unavailable(atCapacity(admitted), RETRY_AFTER_S, { reason: admitted.reason })
  }

  private async placeAdmitted(
    workspace: WorkspaceDoc,
    body: PlaceCall,
    {
      now,
      phone,
      scheduledFor,
      variables,
      extract,
    }: { now: number; phone: string; scheduledFor: number | null; variables: ReturnType<typeof checkVariables>; extract: ReturnType<typeof extractSpecs> },
  ): Promise<{ id: string; to: string; status: string }> {
    const contact = await this.deps.contacts.findByPhone(workspace.id, phone)
    checkConsent(phone, contact)
    const agents = await this.candidates(workspace.id, body.agent)
    const chosen = chooseAgent(
      agents.map((a) => ({ id: a.id, name: a.name, answersCalls: a.voice.answersCalls, phoneNumber: a.phoneNumber ?? null })),
      body.agent,
    )
    // Chosen by identity (its number); it talks as published: 409 while nothing is (docs/spec.md Agent publication).
    const agent = await this.deps.published.servingAgent(workspace.id, chosen.id)
    if (!agent.voice.answersCalls) throw clashes(`agent ${agent.name} does not answer the phone in its published version (voice.answersCalls is off there); publish the change first`)
    const numbers = (await this.deps.numbers.list(workspace.id)).filter((n) => n.agentId === agent.id && n.channel === 'voice')
    const from = chooseFrom(chosen, numbers, body.from)
    if (body.overrides?.voice !== undefined) await this.checkVoice(workspace, body.overrides.voice)

    // 402 before a line is taken: the account must be able to pay a first minute (Free: minutes left).
    await this.deps.meter.checkCall(workspace, voiceTier(agent.voice.voice))

    const id = newId(scheduledFor === null ? 'out' : 'sch')
    if (scheduledFor === null) await takeLine(this.deps.coordination, workspace, id, now)
    const row = firstRow(workspace, agent, { id, phone, from: from.number, body, variables, extract, scheduledFor, now })
    const retry = body.retry ? { maxAttempts: body.retry.maxAttempts, delayMs: body.retry.delayMinutes * MINUTE_MS } : null
    const { actors } = this.deps
    const { tries } = this.deps
    // The row, then the actor that reads it. Where the store applies writes as they are issued and
    // commits them in order (`pipelined`), both go in one commit: the POST waits for one commit, not
    // two. (Were the row refused on its own, the POST fails and the actor, finding no row, fails the
    // call without dialling.)
    if (tries.pipelined) await Promise.all([tries.insert(row), actors.spawn(id, { id, at: now, scheduledFor, retry })])
    else {
      await tries.insert(row)
      await actors.spawn(id, { id, at: now, scheduledFor, retry })
    }
    // The POST answers once the placement is known (docs/spec.md's 502 when the network refused it), not
    // after what follows it — a callee who answers and hangs up at once would hold the answer for the
    // whole call and its analysis — nor after the actor has stored that it was placed (bench:calls' p99).
    const placement = await actors.reach(id, placementDecided)
    if (placement.value === 'failed') {
      // Refused: the 502 carries the call as stored, so it waits for the actor to store it.
      await actors.settle(id)
      const placed = await this.newest(id)
      if (placed?.status === 'failed' && placed.hangup === 'failed') {
        throw upstreamFailed(`the phone network would not place the call: ${placed.error ?? 'refused'}; it is recorded as failed`, { id, call: presentCall(placed) })
      }
    }
    // docs/spec.md: 202 `{ id, to, status: ringing }` — the status the call was accepted in (the network may
    // have answered it since; GET tells).
    return { id, to: phone, status: scheduledFor === null ? 'ringing' : 'scheduled' }
  }

  /**
   * A simulated call (the simulations feature): the agent calls a sandbox callee at `to`, talking
   * as `simulation.target`, through the same call actor as a real call. None of POST /calls' rules
   * apply: no contact, consent, published version, balance, line or rate (nothing is billed and no
   * carrier is involved). Answers the call id once the network has taken it.
   */
  async placeSimulated(workspace: WorkspaceDoc, agent: AgentDoc, c: { to: string; variables: CallTryDoc['variables']; simulation: CallSimulation; caller: SimulatedCaller }): Promise<string> {
    if (!this.deps.simulatedCallers) throw clashes('simulated calls need the sandbox phone network')
    const now = this.deps.clock.now()
    const id = newId('out')
    this.deps.simulatedCallers(id, c.caller)
    const row = firstRow(workspace, agent, { id, phone: c.to, from: 'simulation', body: { to: c.to, purpose: '' }, variables: c.variables, extract: null, scheduledFor: null, now })
    // No purpose: the agent opens with its greeting, as when a caller rings it.
    await this.deps.tries.insert({ ...row, listed: false, purpose: null, simulation: c.simulation })
    const { actors } = this.deps
    await actors.spawn(id, { id, at: now, scheduledFor: null, retry: null })
    await actors.reach(id, placementDecided)
    return id
  }

  /** Whether simulated calls can be placed (the sandbox network carries the calls). */
  simulates(): boolean {
    return !!this.deps.simulatedCallers
  }

  /** A try's row as stored, whatever it is (the simulations feature reads its calls' outcomes). */
  async row(callId: string, attempt = 1): Promise<CallTryDoc | null> {
    return this.deps.tries.get(tryId(callId, attempt))
  }

  /**
   * GET /calls/{id}: the newest try; another workspace's call, or one the API did not place, is 404
   * — except browser calls, which the developer can read nowhere else (listed, like placed calls).
   */
  async get(workspace: WorkspaceDoc, id: string): Promise<CallTryDoc> {
    const row = await newestTry(triesIn(this.deps.tries, workspace.id), id)
    if (!row || (row.direction !== 'outbound' && row.surface !== 'web')) throw notThere(`no call ${id} in this workspace`)
    return row
  }

  /** GET /calls: one row per try that rang, newest first. */
  page(workspace: WorkspaceDoc, query: typeof ListCallsQuery.static, limit: number, after: PageAfter | null): Promise<CallTryDoc[]> {
    const filter: ScopedFilter = { listed: true }
    if (query.agent) filter.agentId = query.agent
    if (query.status) filter.status = query.status
    if (query.reference) filter.reference = query.reference
    const range: Record<string, string> = {}
    if (query.since) range.$gte = checkInstant(query.since, 'since')
    if (query.until) range.$lt = checkInstant(query.until, 'until')
    if (Object.keys(range).length) filter.createdAt = range
    return triesIn(this.deps.tries, workspace.id).page(filter, limit, after)
  }

  /**
   * DELETE /calls/{id}: waiting → cancelled (200), live → ended at once (202, the ending follows),
   * ended → 409 with its report. A call on a brought number without carrier credentials cannot be ended.
   */
  async end(workspace: WorkspaceDoc, id: string): Promise<{ status: 200 | 202; call: CallTryDoc }> {
    const row = await this.get(workspace, id)
    // Only a live call needs the carrier to end it; a waiting one is cancelled here.
    if (row.from && (row.status === 'ringing' || row.status === 'connected')) {
      const number = (await this.deps.numbers.list(workspace.id)).find((n) => n.number === row.from)
      if (number && number.source === 'brought' && !number.carrierCredentials) {
        throw clashes(`the call rings from ${row.from}, a brought number whose carrier credentials were not added; it cannot be ended from here`, { call: presentCall(row) })
      }
    }
    const { actors } = this.deps
    const before = await actors.read(id)
    const wasLive = before?.state === 'ringing' || before?.state === 'connected' || (TRANSFER_STATES as readonly unknown[]).includes(before?.state)
    const asked = await actors.ask(id, { type: 'call.delete', at: this.deps.clock.now() })
    if (!asked.ok) throw clashes(asked.refusal.message, { state: asked.refusal.state, call: presentCall(row) })
    await actors.settle(id)
    return { status: wasLive ? 202 : 200, call: (await this.newest(id)) ?? row }
  }

  /** GET /calls/summary. */
  async totals(workspace: WorkspaceDoc, days: number): Promise<CallTotals> {
    const now = this.deps.clock.now()
    const since = iso(totalsWindowStart(days, workspace.timezone, now))
    const [groups, debitMicro] = await Promise.all([
      triesIn(this.deps.tries, workspace.id).group({ startedAt: { $gte: since }, tally: { $ne: null } }, { by: 'tally', sum: ['seconds'] }),
      // What the calls cost, read from the ledger: their minutes and their analysis passes charged in the window.
      this.deps.ledger.spendSince(workspace.id, since, ['call_minute', 'analysis']),
    ])
    const totals = callTotals(
      groups.filter((g) => typeof g.key === 'string').map((g) => ({ key: g.key as string, count: g.count, seconds: g.sums.seconds ?? 0, debitMicro: 0 })),
      days,
      workspace.timezone,
      now,
    )
    return { ...totals, debitMicro }
  }

  /**
   * A customer rings one of our numbers (docs/spec.md: inbound calls count toward the same lines, show
   * in the totals, are analysed, and are not listed under GET /calls). Answered by the number's
   * agent when it takes calls and a line is free; otherwise nobody answers (null).
   */
  async answerIncoming(
    call: { from: string; to: string; callRef: string; at: number },
    workspaceOf: (id: string) => Promise<WorkspaceDoc | null>,
  ): Promise<{ callId: string; attempt: number } | null> {
    const number = await this.deps.numbers.byNumber(call.to)
    if (!number?.agentId || number.channel !== 'voice') return null
    const workspace = await workspaceOf(number.workspaceId)
    if (workspace?.status !== 'active') return null
    // A number's agent with nothing published still picks up, to say the line is not available
    // (live/media.ts); a published one that does not take calls lets it ring out.
    const agent = await this.deps.agents.get(workspace.id, number.agentId).catch(() => null)
    if (!agent) return null
    const live = await this.deps.published.live(workspace.id, agent.id)
    if (live && !live.voice.answersCalls) return null
    const id = newId('in')
    for (const { set, capacity } of lineSets(workspace)) {
      const hold = await this.deps.coordination.acquireSlot(set, id, capacity, LINE_TTL_MS)
      if (!hold.acquired) {
        for (const { set: s } of lineSets(workspace)) await this.deps.coordination.releaseSlot(s, id)
        return null
      }
    }
    const row = firstRow(workspace, agent, { id, phone: call.from, from: call.to, body: { to: call.from, purpose: '' }, variables: {}, extract: null, scheduledFor: null, now: call.at })
    await this.deps.tries.insert({ ...row, direction: 'inbound', listed: false, status: 'connected', purpose: null, callRef: call.callRef, answeredAt: iso(call.at) })
    // The actor keeps the network's reference: a transfer or DELETE acts on the line through it.
    await this.deps.actors.spawn(id, { id, at: call.at, inbound: true, callRef: call.callRef })
    return { callId: id, attempt: 1 }
  }

  /**
   * A website visitor presses the widget's call button: an inbound `voice` call on the
   * `web` surface, answered at once by the agent (already the published one, given by the caller),
   * on the same lines, per-minute rate and actor as a phone call, so it is analysed, recorded and
   * counted like one. Unlike a phone call it is listed by GET /calls (the developer sees browser
   * calls nowhere else). No phone number: the visitor is anonymous.
   */
  async answerWeb(workspace: WorkspaceDoc, agent: AgentDoc): Promise<{ callId: string; attempt: number }> {
    const now = this.deps.clock.now()
    const id = newId('in')
    // A browser's call takes room as a phone call does: refused (503) before a line or a row is taken.
    const ticket = this.admit(workspace.id, 'web')
    try {
      await takeLine(this.deps.coordination, workspace, id, now)
      const row = firstRow(workspace, agent, { id, phone: '', from: '', body: { to: '', purpose: '' }, variables: {}, extract: null, scheduledFor: null, now })
      await this.deps.tries.insert({ ...row, direction: 'inbound', surface: 'web', listed: true, status: 'connected', phone: null, from: null, purpose: null, answeredAt: iso(now) })
      await this.deps.actors.spawn(id, { id, at: now, inbound: true })
    } catch (err) {
      ticket?.release()
      throw err
    }
    ticket?.bind(id)
    return { callId: id, attempt: 1 }
  }

  /**
   * Waiting calls stop (docs/spec.md): a person who opts out or goes on the do-not-call list before a
   * booked call or a retry rings is not called (`cancelled`, `hangup: not_placed`, a last
   * call.analysed); a deleted customer's waiting calls are cancelled (`hangup: cancelled`).
   */
  async stopWaiting(workspaceId: string, phone: string | null, event: 'contact.optedOut' | 'call.delete', reason?: 'opted_out' | 'do_not_call'): Promise<void> {
    const filter: ScopedFilter = { direction: 'outbound' }
    if (phone) filter.phone = phone
    const { actors } = this.deps
    for (const row of await triesIn(this.deps.tries, workspaceId).find(filter)) {
      const waiting = row.status === 'scheduled' || (row.status === 'missed' && row.retryScheduledFor !== null)
      if (!waiting) continue
      const at = this.deps.clock.now()
      await actors.send(row.callId, event === 'call.delete' ? { type: 'call.delete', at } : { type: 'contact.optedOut', at, reason })
    }
  }

  /** How many tries of the workspace's calls placed with `reference` are not analysed yet (a calling campaign's, before it is sent). */
  unanalysed(workspaceId: string, reference: string): Promise<number> {
    return triesIn(this.deps.tries, workspaceId).count({ reference, analysedAt: null })
  }

  /** The newest try of a call (its actor's current one). */
  newest(callId: string): Promise<CallTryDoc | null> {
    return newestTry(this.deps.tries, callId)
  }

  /**
   * `overrides.voice` (docs/spec.md BYOK: "a per-call voice may be given"): with BYOK on, a voice the
   * workspace's voice key offers (GET /byok/voices); otherwise one of ours (GET /voices).
   */
  private async checkVoice(workspace: WorkspaceDoc, voice: string): Promise<void> {
    const offered = this.deps.byokOffersVoice ? await this.deps.byokOffersVoice(workspace, voice) : null
    if (offered === false) throw invalid('overrides.voice', `${voice} is not a voice of this workspace's BYOK voice key (GET /byok/voices lists them)`)
    if (offered === null && !isVoice(voice)) throw invalid('overrides.voice', `${voice} is not a voice (GET /voices lists them)`)
  }

  /**
   * The agents chooseAgent decides among: the phone agents when none is named (the newest
   * PHONE_AGENTS_NAMED + 1, enough for its "several: name one" message); the one with that id when
   * one is named by id; otherwise every agent, for a name (matched case-insensitively, which the
   * store cannot do).
   */
  private async candidates(workspaceId: string, requested: string | undefined): Promise<AgentDoc[]> {
    if (requested === undefined) return this.deps.agents.phoneAgents(workspaceId, PHONE_AGENTS_NAMED + 1)
    const wanted = requested.trim()
    const byId = wanted.startsWith('ag_') ? await this.deps.agents.get(workspaceId, wanted).catch(() => null) : null
    return byId ? [byId] : this.agentsOf(workspaceId)
  }

  private async agentsOf(workspaceId: string): Promise<AgentDoc[]> {
    const all: AgentDoc[] = []
    let after: PageAfter | null = null
    for (;;) {
      const page = await this.deps.agents.list(workspaceId, AGENT_PAGE, after)
      all.push(...page)
      if (page.length < AGENT_PAGE) return all
      const last = page[page.length - 1]
      after = { createdAt: last.createdAt, id: last.id }
    }
  }
}
