/**
 * Legacy webhook endpoints (docs/spec.md "Webhooks (legacy)"): create (the secret once), and the routes
 * docs/spec.md calls "not shown" — list, read, update, delete — plus the delivery records and POST retry.
 * An account is the key's own workspace; it holds at most 20 endpoints, numbered 1, 2, 3… within
 * the account and never reused (endpoint-numbers.ts).
 */

import { canApply, type WebhookDeliveryContext } from '../../../machines/webhook-delivery'
import { type Clock, iso } from '../../clock'
import type { SecretBox } from '../../crypto/secrets'
import { isLegacyEventType, LEGACY_EVENT_TYPES } from '../../events/catalogue'
import { clashes, notThere, Refused } from '../../refusals'
import type { AgentService } from '../agents/public'
import { withinCap } from './cap-guard'
import type { WebhookDeliveryActors } from './delivery-actor'
import { EndpointNumbers } from './endpoint-numbers'
import { type CreateEndpoint, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type Delivery, type Endpoint, type PatchEndpoint } from './legacy-model'
import type { LegacyDeliveryDoc, LegacyEndpointDoc, WebhookRepos } from './repository'
import { newSigningSecret } from './signing'
import { checkTargetAddress, parseTarget, TargetError } from './targets'

// docs/spec.md Limits: legacy endpoints per account.
export const MAX_LEGACY_ENDPOINTS = 20

/** The legacy surface's 400 names no field: its messages are FastAPI's, free text. */
const invalidInput = (message: string) => new Refused('invalid', message)
const tooMany = (held: number) => invalidInput(`this account has ${held} webhook endpoints, the most allowed (${MAX_LEGACY_ENDPOINTS})`)

export interface LegacyServiceDeps {
  repos: WebhookRepos
  agents: AgentService
  deliveries: WebhookDeliveryActors
  secrets: SecretBox
  clock: Clock
  allowPrivate: boolean
}

export class LegacyWebhookService {
  private readonly numbers: EndpointNumbers

  constructor(private readonly deps: LegacyServiceDeps) {
    this.numbers = new EndpointNumbers(deps.repos.endpointNumbers, (workspaceId) => this.highestNumber(workspaceId))
  }

  async create(workspaceId: string, input: CreateEndpoint): Promise<{ doc: LegacyEndpointDoc; secret: string }> {
    const { repos, secrets, clock } = this.deps
    const held = await repos.endpoints.in(workspaceId).count()
    // Refuses early and cheaply; racing creates can all pass it, so confirm() checks again.
    if (held >= MAX_LEGACY_ENDPOINTS) throw tooMany(held)
    const url = await this.url(input.url)
    const eventTypes = checkEventTypes(input.event_types)
    const { agentId, agentNumber } = await this.agent(workspaceId, input.agent_id ?? null)
    const secret = newSigningSecret()
    const now = iso(clock.now())
    // Claimed for this create alone, so the insert cannot clash (the unique index is a backstop).
    const number = await this.numbers.claim(workspaceId)
    const doc: LegacyEndpointDoc = {
      id: `lwe_${workspaceId}_${number}`,
      number,
      workspaceId,
      url,
      eventTypes,
      agentId,
      agentNumber,
      description: input.description ?? null,
      isActive: true,
      maxRetries: input.max_retries ?? DEFAULT_MAX_RETRIES,
      timeoutMs: input.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      secretSealed: secrets.seal(secret),
      createdAt: now,
      updatedAt: now,
    }
    await repos.endpoints.in(workspaceId).insert(doc)
    await this.confirm(doc)
    return { doc, secret }
  }

  /**
   * The checks the up-front ones cannot settle, made again now that the row is in the store:
   * racing creates over the cap (cap-guard.ts; numbers are claimed one at a time, so they are the
   * creation order) and an agent deleted while this create waited (AgentService.remove marks the agent before its cascades, so asking `exists` after the insert is enough). A refusal,
   * or any failure, takes the endpoint back (with any delivery an event already queued for it):
   * the caller is told the create failed, so it must not stay.
   */
  private async confirm(doc: LegacyEndpointDoc): Promise<void> {
    const { repos, agents } = this.deps
    try {
      const keep = await withinCap({
        cap: MAX_LEGACY_ENDPOINTS,
        mine: doc,
        rows: () => repos.endpoints.in(doc.workspaceId).find(),
        before: (a, b) => a.number < b.number,
      })
      if (!keep) throw tooMany(MAX_LEGACY_ENDPOINTS)
      if (doc.agentId !== null && !(await agents.exists(doc.workspaceId, doc.agentId))) throw notThere(`no agent ${doc.agentId} in this workspace`)
    } catch (err) {
      await repos.deliveries.deleteMany({ endpointId: doc.id })
      await repos.endpoints.in(doc.workspaceId).delete(doc.id)
      throw err
    }
  }

  /**
   * Newest first: by number, which follows creation order and never ties (created_at can). Every
   * endpoint, not the first 20: an account can hold more (created before the cap held under
   * concurrent creates), and one it cannot see it cannot delete.
   */
  async list(workspaceId: string): Promise<LegacyEndpointDoc[]> {
    const docs = await this.deps.repos.endpoints.in(workspaceId).find({}, { sort: [['number', -1]] })
    return Promise.all(docs.map((d) => this.withAgentNumber(d)))
  }

  async get(workspaceId: string, number: number): Promise<LegacyEndpointDoc> {
    // Numbers are per account: another account's endpoint with this number is simply not found.
    const doc = await this.deps.repos.endpoints.in(workspaceId).findOne({ number })
    if (!doc) throw notThere(`no webhook endpoint ${number}`)
    return this.withAgentNumber(doc)
  }

  /** Endpoints stored before agents had legacy numbers learn theirs on first read. */
  private async withAgentNumber(doc: LegacyEndpointDoc): Promise<LegacyEndpointDoc> {
    if (doc.agentId === null || typeof doc.agentNumber === 'number') return doc
    const agentNumber = await this.deps.agents.legacyNumberOfId(doc.agentId)
    if (agentNumber === null) return doc
    await this.deps.repos.endpoints.in(doc.workspaceId).update(doc.id, { agentNumber })
    return { ...doc, agentNumber }
  }

  async patch(workspaceId: string, number: number, input: PatchEndpoint): Promise<LegacyEndpointDoc> {
    const current = await this.get(workspaceId, number)
    const set: Record<string, unknown> = {}
    if (input.url !== undefined) set.url = await this.url(input.url)
    if (input.event_types !== undefined) set.eventTypes = checkEventTypes(input.event_types)
    if (input.agent_id !== undefined) Object.assign(set, await this.agent(workspaceId, input.agent_id))
    if (input.description !== undefined) set.description = input.description
    if (input.max_retries !== undefined) set.maxRetries = input.max_retries
    if (input.timeout_ms !== undefined) set.timeoutMs = input.timeout_ms
    if (input.is_active !== undefined) set.isActive = input.is_active
    if (Object.keys(set).length === 0) return current
    set.updatedAt = iso(this.deps.clock.now())
    return (await this.deps.repos.endpoints.in(workspaceId).update(current.id, set)) ?? { ...current, ...set }
  }

  /** Removes the endpoint and its delivery records; a retry still scheduled then fails without sending. */
  async remove(workspaceId: string, number: number): Promise<void> {
    const doc = await this.get(workspaceId, number)
    await this.deps.repos.deliveries.deleteMany({ endpointId: doc.id })
    await this.deps.repos.endpoints.in(workspaceId).delete(doc.id)
  }

  async deliveries(workspaceId: string, number: number, limit: number): Promise<Delivery[]> {
    const endpoint = await this.get(workspaceId, number)
    const docs = await this.deps.repos.deliveries.page({ endpointId: endpoint.id }, limit)
    return Promise.all(docs.map((d) => this.presentDelivery(d)))
  }

  /** POST retry: only a failed delivery goes back to pending (attempts reset); others 409 naming the status. */
  async retry(workspaceId: string, number: number, deliveryId: string): Promise<void> {
    const endpoint = await this.get(workspaceId, number)
    const doc = await this.deps.repos.deliveries.get(deliveryId)
    if (!doc || doc.endpointId !== endpoint.id) throw notThere(`no delivery ${deliveryId} for webhook endpoint ${number}`)
    const record = await this.deps.deliveries.read(deliveryId)
    if (!record) throw clashes('delivery is pending; only failed deliveries can be retried', { state: 'pending' })
    const applies = canApply(record.state as 'pending', 'delivery.retry')
    if (!applies.ok) throw clashes(applies.message, { state: applies.state })
    const asked = await this.deps.deliveries.ask(deliveryId, { type: 'delivery.retry', at: this.deps.clock.now() })
    // It moved between our read and the send (e.g. a retry raced us): the chart refused it.
    if (!asked.ok) throw clashes(asked.refusal.message, { state: asked.refusal.state })
  }

  present(doc: LegacyEndpointDoc): Endpoint {
    return {
      id: doc.number,
      url: doc.url,
      event_types: doc.eventTypes,
      agent_id: doc.agentNumber ?? null,
      description: doc.description,
      is_active: doc.isActive,
      max_retries: doc.maxRetries,
      timeout_ms: doc.timeoutMs,
      created_at: doc.createdAt,
    }
  }

  /** A delivery record with its status from the delivery actor (pending until the actor exists). */
  async presentDelivery(doc: LegacyDeliveryDoc): Promise<Delivery> {
    const record = await this.deps.deliveries.read(doc.id)
    const c = (record?.snapshot as { context?: WebhookDeliveryContext } | undefined)?.context
    const stamp = (ms: number | null | undefined) => (typeof ms === 'number' ? iso(ms) : null)
    return {
      id: doc.id,
      event_id: doc.eventId,
      event_type: doc.eventType,
      status: (record?.state as Delivery['status'] | undefined) ?? 'pending',
      response_status: c?.responseStatus ?? null,
      error_message: c?.errorMessage ?? null,
      attempts: c?.attempts ?? 0,
      next_attempt_at: stamp(c?.nextAttemptAt),
      created_at: doc.createdAt,
      completed_at: stamp(c?.completedAt),
    }
  }

  private async url(raw: string): Promise<string> {
    const rules = { allowPrivate: this.deps.allowPrivate, email: false }
    try {
      const target = parseTarget(raw, rules)
      await checkTargetAddress(target, rules)
      return target.kind === 'url' ? target.url : raw
    } catch (err) {
      if (err instanceof TargetError) throw invalidInput(`url ${err.message}`)
      throw err
    }
  }

  /** `agent_id` is the agent's legacy number; the endpoint keeps the agent id too (events carry it). */
  private async agent(workspaceId: string, agentNumber: number | null): Promise<{ agentId: string | null; agentNumber: number | null }> {
    if (agentNumber === null) return { agentId: null, agentNumber: null }
    const agent = await this.deps.agents.getLegacy(workspaceId, agentNumber)
    return { agentId: agent.id, agentNumber }
  }

  private async highestNumber(workspaceId: string): Promise<number> {
    const [top] = await this.deps.repos.endpoints.in(workspaceId).find({}, { sort: [['number', -1]], limit: 1 })
    return top?.number ?? 0
  }
}

function checkEventTypes(types: string[]): string[] {
  if (types.length === 0) throw invalidInput(`event_types must list at least one of ${LEGACY_EVENT_TYPES.join(', ')}`)
  const unknown = types.filter((e) => !isLegacyEventType(e))
  if (unknown.length > 0) throw invalidInput(`invalid event types: ${unknown.join(', ')} (valid: ${LEGACY_EVENT_TYPES.join(', ')})`)
  return [...new Set(types)]
}
