/**
 * Campaigns (docs/spec.md Campaign, Campaign status, Campaigns endpoints): created and started in the
 * console, read and moved (pause, resume, cancel) in v1. Every move goes to the campaign's actor
 * (machines/campaign.ts); one that does not apply answers 409 naming the state. Counts are read
 * from the recipients' rows, so they are exact whatever the pauses, resumes and restarts. A campaign
 * created with `scheduledAt` starts itself then (its actor's durable deadline); starting or resuming
 * needs the agent published (docs/spec.md Agent publication), else 409.
 */

import { type CampaignEvent, type CampaignSnapshot, canApply } from '../../../machines/campaign'
import { type Clock, iso } from '../../clock'
import type { EventBus } from '../../events/bus'
import { newId } from '../../ids'
import { checkInstant } from '../../instant'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, isRefused, notThere } from '../../refusals'
import type { Collection, PageAfter } from '../../store/port'
import type { ScopedInsert, WorkspaceCollection } from '../../store/workspace-scoped'
import type { AgentService } from '../agents/public'
import { PURPOSE_MAX } from '../calls/public'
import { normalizePhone } from '../contacts/public'
import type { NotificationService } from '../notifications/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { TemplateService } from '../templates/public'
import type { CampaignActors, CampaignEffectPort } from './actor'
import { broadcastNumber } from './broadcast'
import { tooFewLines } from './calling'
import { type CampaignDoc, type CampaignStatus, RECIPIENT_STATUSES, type RecipientDoc, type RecipientStatus, recipientsIn } from './repository'
import type { CampaignSender } from './sender'

/** Recipients per campaign: 100,000 is ten times bench:campaigns and within one console request (~2 MB of numbers). */
export const MAX_RECIPIENTS = 100_000
/** How far ahead a campaign may be scheduled: a year, so a yearly campaign can be set up a year ahead. */
export const SCHEDULE_MAX_DAYS = 366
const DAY_MS = 86_400_000
/** Rows written per turn when a campaign is created: one group commit each (store/group-commit.ts). */
const INSERT_CHUNK = 1_000

export interface Counts {
  recipients: number
  sent: number
  delivered: number
  read: number
  replied: number
  failed: number
  skipped: number
  /** Calls a machine answered and the agent left its message on (within `delivered`). */
  voicemails: number
}

export interface CampaignDeps {
  campaigns: WorkspaceCollection<CampaignDoc>
  recipients: Collection<RecipientDoc>
  agents: AgentService
  numbers: PhoneNumberService
  templates: TemplateService
  /** The versions feature's serving: 409 when the agent has nothing published. */
  serving: { served(workspaceId: string, agentId: string): Promise<unknown> }
  notifications: NotificationService
  sender: CampaignSender
  bus: EventBus
  clock: Clock
  actors: CampaignActors
}

/** The console's create body (docs/design.md). */
export interface NewCampaign {
  agent: string
  name: string
  kind: 'chatapp' | 'voice'
  template?: string
  purpose?: string
  recipients: string[]
  /** An ISO 8601 instant in the future: the campaign starts itself then; null or absent: by hand. */
  scheduledAt?: string | null
}

type Move = 'pause' | 'resume' | 'cancel' | 'start'
/** Where an applied move can leave the campaign: a start or resume may finish it (nobody left) or fail it at once (e.g. its number is gone). */
const LEADS_TO: Record<Move, CampaignStatus[]> = { start: ['sending', 'sent', 'failed'], pause: ['paused'], resume: ['sending', 'sent', 'failed'], cancel: ['cancelled'] }

export class CampaignService {
  constructor(private readonly d: CampaignDeps) {}

  async create(workspace: WorkspaceDoc, input: NewCampaign): Promise<CampaignDoc> {
    const d = this.d
    const workspaceId = workspace.id
    if (!input.name.trim()) throw invalid('name', 'must not be blank')
    const scheduledAt = this.scheduleOf(input.scheduledAt)
    if (!(await d.agents.exists(workspaceId, input.agent))) throw invalid('agent', `no agent ${input.agent} in this workspace`)
    const agent = await d.agents.get(workspaceId, input.agent)
    let template: string | null = null
    let language: string | null = null
    if (input.kind === 'chatapp') {
      if (input.purpose !== undefined) throw invalid('purpose', 'a broadcast sends a template; purpose is for calling campaigns')
      if (!input.template?.trim()) throw invalid('template', 'a broadcast needs the name of an approved template')
      const number = await broadcastNumber(d.numbers, workspaceId, agent.id)
      if (!number) throw clashes(`agent ${agent.id} has no chat-app number to send a broadcast from; attach one in the console`)
      // Its oldest approved language on that number (as a template reply picks it); 404 / 409 as there.
      const approved = await d.templates.forReply(workspaceId, number, input.template.trim(), undefined)
      template = approved.name
      language = approved.language
    } else {
      if (input.template !== undefined) throw invalid('template', 'a calling campaign has a purpose, not a template')
      if (!input.purpose?.trim()) throw invalid('purpose', 'a calling campaign needs the reason for calling, spoken first when someone answers')
      if (input.purpose.length > PURPOSE_MAX) throw invalid('purpose', `must be at most ${PURPOSE_MAX} characters (${input.purpose.length} given)`)
      if (!agent.voice.answersCalls || !(await d.numbers.list(workspaceId)).some((n) => n.channel === 'voice' && n.agentId === agent.id)) {
        throw clashes(`agent ${agent.id} does not answer the phone: turn voice on (voice.answersCalls) and attach a number in the console`)
      }
      const few = tooFewLines(workspace)
      if (few) throw clashes(few)
    }
    if (input.recipients.length > MAX_RECIPIENTS) throw invalid('recipients', `at most ${MAX_RECIPIENTS} numbers (${input.recipients.length} given)`)
    const phones = new Set<string>()
    input.recipients.forEach((raw, i) => {
      const phone = normalizePhone(raw)
      if (!phone) throw invalid(`recipients[${i}]`, `"${raw}" is not a phone number`)
      phones.add(phone)
    })
    const now = iso(d.clock.now())
    const id = newId('cmp')
    const doc: CampaignDoc = {
      id,
      workspaceId,
      agentId: agent.id,
      name: input.name.trim(),
      kind: input.kind,
      template,
      language,
      purpose: input.kind === 'voice' ? input.purpose!.trim() : null,
      recipients: phones.size,
      status: 'draft',
      scheduledAt: scheduledAt === null ? null : iso(scheduledAt),
      startedAt: null,
      finishedAt: null,
      createdAt: now,
      lastError: null,
    }
    const rows = [...phones].map((phone, index): ScopedInsert<RecipientDoc> => ({ id: `${id}:${index}`, campaignId: id, index, phone, status: 'pending', createdAt: now }))
    const recipients = recipientsIn(d.recipients, workspaceId)
    // Rows, then the actor, then the campaign's own row: a crash part-way leaves nothing visible
    // that could not be moved (the campaign appears only once its actor exists).
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await Promise.all(rows.slice(i, i + INSERT_CHUNK).map((r) => recipients.insert(r)))
    await d.actors.spawn(id, { id, recipients: phones.size, scheduledAt })
    await d.campaigns.in(workspaceId).insert(doc)
    return doc
  }

  async get(workspaceId: string, id: string): Promise<CampaignDoc> {
    const doc = await this.d.campaigns.in(workspaceId).get(id)
    if (!doc) throw notThere(`no campaign ${id} in this workspace`)
    return doc
  }

  page(workspaceId: string, status: CampaignStatus | undefined, limit: number, after: PageAfter | null): Promise<CampaignDoc[]> {
    return this.d.campaigns.in(workspaceId).page(status ? { status } : {}, limit, after)
  }

  /** pause / resume / cancel / start: 409 naming the state when the move does not apply. */
  async move(workspaceId: string, id: string, move: Move): Promise<CampaignDoc> {
    const d = this.d
    const campaign = await this.get(workspaceId, id)
    const actors = d.actors
    const record = await actors.read(id)
    if (!record) throw notThere(`no campaign ${id} in this workspace`)
    const event = { type: `campaign.${move}`, at: d.clock.now() } as CampaignEvent
    const before = canApply(record.state as CampaignSnapshot['value'], event)
    if (!before.ok) throw clashes(before.message, { state: before.state })
    // Only a published agent talks to people: its calls, and the answers to its messages.
    if (move === 'start' || move === 'resume') await d.serving.served(campaign.workspaceId, campaign.agentId)
    const after = await actors.send(id, event)
    const state = String(after.value) as CampaignStatus
    if (!LEADS_TO[move].includes(state)) throw clashes(`campaign is ${state}; ${move} does not apply`, { state })
    return (await d.campaigns.in(workspaceId).get(id))!
  }

  /**
   * A campaign's recipients in the order they were given (`index`), `status` ones only when asked:
   * each one's outcome and, for a failure or a skip, why (the row's `error`). `after`: the last
   * index of the previous page.
   */
  async recipientsPage(workspaceId: string, id: string, query: { status?: RecipientStatus }, limit: number, after: number | null): Promise<RecipientDoc[]> {
    const campaign = await this.get(workspaceId, id)
    const filter = { campaignId: campaign.id, ...(query.status ? { status: query.status } : {}), ...(after !== null ? { index: { $gt: after } } : {}) }
    return this.d.recipients.find(filter, { sort: [['index', 1]], limit })
  }

  async counts(id: string): Promise<Counts> {
    // One count per status over the (campaignId, status) index: 100,000 rows in ~7 ms, where a
    // group by status reads every row's document (~200 ms).
    const each = await Promise.all(RECIPIENT_STATUSES.map((status) => this.d.recipients.count({ campaignId: id, status })))
    const n = (s: RecipientStatus) => each[RECIPIENT_STATUSES.indexOf(s)]!
    const replied = n('replied')
    const read = replied + n('read')
    const delivered = read + n('delivered')
    const voicemails = await this.d.recipients.count({ campaignId: id, status: 'delivered', voicemail: true })
    return { recipients: each.reduce((a, c) => a + c, 0), sent: delivered + n('sent'), delivered, read, replied, failed: n('failed'), skipped: n('skipped'), voicemails }
  }

  async present(doc: CampaignDoc) {
    return {
      id: doc.id,
      agent: doc.agentId,
      name: doc.name,
      kind: doc.kind,
      status: doc.status,
      template: doc.template,
      purpose: doc.purpose,
      counts: await this.counts(doc.id),
      scheduledAt: doc.scheduledAt,
      startedAt: doc.startedAt,
      finishedAt: doc.finishedAt,
      createdAt: doc.createdAt,
      lastError: doc.lastError,
    }
  }

  /**
   * Why a campaign cannot begin sending without a request to answer (its scheduled start, a restart):
   * its agent has nothing published (the words of the 409 a manual start answers), or null.
   */
  async unpublished(c: CampaignDoc): Promise<string | null> {
    try {
      await this.d.serving.served(c.workspaceId, c.agentId)
      return null
    } catch (err) {
      if (isRefused(err, 'conflict')) return err.message
      throw err
    }
  }

  /** `scheduledAt` as service-clock ms: an instant (a date alone is not one) in the future, within SCHEDULE_MAX_DAYS. */
  private scheduleOf(value: string | null | undefined): number | null {
    if (value === undefined || value === null) return null
    if (!value.includes('T')) throw invalid('scheduledAt', 'must be an ISO 8601 instant with a time and zone (for example 2026-11-21T09:30:00Z)')
    const at = Date.parse(checkInstant(value, 'scheduledAt'))
    const now = this.d.clock.now()
    if (at <= now) throw invalid('scheduledAt', `must be in the future (the service clock reads ${iso(now)})`)
    if (at - now > SCHEDULE_MAX_DAYS * DAY_MS) throw invalid('scheduledAt', `is more than ${SCHEDULE_MAX_DAYS} days ahead`)
    return at
  }

  /** A customer deleted: its campaigns are cancelled (and not restarted when it is restored). */
  cancelWorkspace(workspaceId: string): Promise<void> {
    return this.cancelWhere(workspaceId, {})
  }

  /** An agent deleted: its campaigns are cancelled (its numbers and templates go with it). */
  cancelAgent(workspaceId: string, agentId: string): Promise<void> {
    return this.cancelWhere(workspaceId, { agentId })
  }

  private async cancelWhere(workspaceId: string, filter: { agentId?: string }): Promise<void> {
    for (const c of await this.d.campaigns.in(workspaceId).find({ ...filter, status: { $in: ['draft', 'sending', 'paused'] } })) {
      await this.d.actors.send(c.id, { type: 'campaign.cancel', at: this.d.clock.now() })
    }
  }

  effects(): CampaignEffectPort {
    const d = this.d
    // The campaign actor knows only its id: the campaign names its workspace.
    const campaigns = d.campaigns.acrossWorkspaces
    return {
      send: (id, report) => d.sender.start(id, report),
      notifyFailure: async (id, reason) => {
        const c = await campaigns.get(id)
        if (!c) return
        // The effect starts before the failed snapshot is projected onto the row: the reason comes with it.
        const lastError = reason ?? c.lastError
        const counts = await this.counts(id)
        await d.notifications.notify({
          workspaceId: c.workspaceId,
          kind: 'campaign.failed',
          title: `Campaign failed: ${c.name}`,
          body: `Campaign ${c.id} ("${c.name}") stopped: ${lastError ?? 'it could not go on'}. ${counts.sent} of ${counts.recipients} recipients were reached before it stopped; the others were not sent to.`,
          data: { campaignId: id, agent: c.agentId, lastError, counts },
          key: `campaign.failed:${id}`,
        })
      },
      project: async (id, snapshot) => {
        const c = snapshot.context
        await campaigns.update(id, {
          status: String(snapshot.value) as CampaignStatus,
          startedAt: c.startedAt === null ? null : iso(c.startedAt),
          finishedAt: c.finishedAt === null ? null : iso(c.finishedAt),
          lastError: c.lastError,
        })
      },
      publish: async (id, event, eventId) => {
        const c = await campaigns.get(id)
        if (!c || event.type !== 'campaign.finished') return
        // The projection of the change that emitted it is stored before this runs (actors/persister.ts).
        await d.bus.publish({ type: 'campaign.finished', workspaceId: c.workspaceId, agentId: c.agentId, data: await this.present(c) }, { id: eventId })
      },
    }
  }
}
