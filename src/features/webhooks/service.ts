/**
 * v1 webhooks (docs/spec.md "Webhooks (v1)"): create, list, read, change, delete, and the switch-off a
 * deleted customer's webhooks get. Health (`enabled`, `delivery`) is the endpoint actor's; this
 * service keeps the registration (agent, url, events, sealed secret).
 */

import { endpointView, type WebhookEndpointContext } from '../../../machines/webhook-endpoint'
import { type Clock, iso } from '../../clock'
import type { SecretBox } from '../../crypto/secrets'
import { ALL_EVENTS } from '../../events/catalogue'
import { newId } from '../../ids'
import { clashes, invalid, notThere, type Refused } from '../../refusals'
import type { PageAfter } from '../../store/port'
import type { AgentService } from '../agents/public'
import { withinCap } from './cap-guard'
import type { WebhookEndpointActors } from './endpoint-actor'
import type { CreateWebhook, PatchWebhook, Webhook } from './model'
import type { WebhookDoc, WebhookRepos } from './repository'
import { newSigningSecret } from './signing'
import { checkTargetAddress, parseTarget, type Target, TargetError, type TargetRules } from './targets'

// Not in docs/spec.md. Each event fans out to every endpoint of its agent; 20 (the legacy surface's
// per-account cap) bounds that fan-out while leaving room for staging, production and an inbox.
export const MAX_WEBHOOKS_PER_AGENT = 20

export interface WebhookServiceDeps {
  repos: WebhookRepos
  agents: AgentService
  endpoints: WebhookEndpointActors
  secrets: SecretBox
  clock: Clock
  rules: Omit<TargetRules, 'email'>
  /** Email targets need an SMTP server (SMTP_URL). */
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  async create(workspaceId: string, input: CreateWebhook): Promise<{ doc: WebhookDoc; signingSecret: string }> {
    const { repos, agents, clock, secrets, endpoints } = this.deps
    await agents.get(workspaceId, input.agent)
    const held = await repos.webhooks.in(workspaceId).count({ agentId: input.agent })
    // Refuses early and cheaply; racing creates can all pass it, so confirm() checks again.
    if (held >= MAX_WEBHOOKS_PER_AGENT) throw tooMany(input.agent, held)
    const target = await this.target(input.url)
    const signingSecret = newSigningSecret()
    const now = iso(clock.now())
    const doc: WebhookDoc = {
      id: newId('wh'),
      workspaceId,
      agentId: input.agent,
      url: target.kind === 'url' ? target.url : target.address,
      targetKind: target.kind,
      events: normaliseEvents(input.events),
      secretSealed: secrets.seal(signingSecret),
      createdAt: now,
      updatedAt: now,
    }
    await repos.webhooks.in(workspaceId).insert(doc)
    await this.confirm(doc)
    await endpoints.spawn(doc.id, { id: doc.id })
    return { doc, signingSecret }
  }

  /**
   * The checks the up-front ones cannot settle, made again now that the row is in the store:
   * racing creates over the cap (cap-guard.ts) and an agent deleted while this create waited
   * (AgentService.remove marks the agent before its cascades, so asking `exists` after the insert is enough). A refusal, or any failure, takes the row back: the caller is told the
   * create failed, so it must not stay (a retry would add a second one).
   */
  private async confirm(doc: WebhookDoc): Promise<void> {
    const { repos, agents } = this.deps
    try {
      const keep = await withinCap({
        cap: MAX_WEBHOOKS_PER_AGENT,
        mine: doc,
        rows: () => repos.webhooks.in(doc.workspaceId).find({ agentId: doc.agentId }),
        before: createdBefore,
      })
      if (!keep) throw tooMany(doc.agentId, MAX_WEBHOOKS_PER_AGENT)
      // Last: the cap check can wait, and a delete can begin meanwhile.
      // Worded as AgentService.get's 404: to the caller the agent is simply not there.
      if (!(await agents.exists(doc.workspaceId, doc.agentId))) throw notThere(`no agent ${doc.agentId} in this workspace`)
    } catch (err) {
      await repos.webhooks.in(doc.workspaceId).delete(doc.id)
      throw err
    }
  }

  list(workspaceId: string, agent: string | undefined, limit: number, after: PageAfter | null): Promise<WebhookDoc[]> {
    return this.deps.repos.webhooks.in(workspaceId).page(agent === undefined ? {} : { agentId: agent }, limit, after)
  }

  async get(workspaceId: string, id: string): Promise<WebhookDoc> {
    // Another workspace's webhook is the same 404 as none at all.
    const doc = await this.deps.repos.webhooks.in(workspaceId).get(id)
    if (!doc) throw notThere(`no webhook ${id} in this workspace`)
    return doc
  }

  async patch(workspaceId: string, id: string, input: PatchWebhook): Promise<WebhookDoc> {
    const current = await this.get(workspaceId, id)
    const set: Record<string, unknown> = {}
    if (input.url !== undefined) {
      const target = await this.target(input.url)
      set.url = target.kind === 'url' ? target.url : target.address
      set.targetKind = target.kind
    }
    if (input.events !== undefined) set.events = normaliseEvents(input.events)
    const at = this.deps.clock.now()
    let doc = current
    if (Object.keys(set).length > 0) {
      set.updatedAt = iso(at)
      doc = (await this.deps.repos.webhooks.in(workspaceId).update(id, set)) ?? { ...current, ...set }
    }
    if (input.enabled !== undefined) {
      await this.deps.endpoints.send(id, { type: input.enabled ? 'endpoint.enable' : 'endpoint.disable', at }, { input: { id } })
    }
    return doc
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const doc = await this.get(workspaceId, id)
    await this.deps.repos.webhooks.in(workspaceId).delete(doc.id)
    // The actor stays as history but off, so a delivery already queued finds nothing to send to.
    await this.deps.endpoints.send(doc.id, { type: 'endpoint.disable', at: this.deps.clock.now() }, { input: { id: doc.id } })
  }

  /** docs/spec.md Customer workspace: a deleted customer's webhooks are switched off. Idempotent. */
  async switchOffWorkspace(workspaceId: string, at: number): Promise<number> {
    const docs = await this.deps.repos.webhooks.in(workspaceId).find()
    for (const doc of docs) await this.deps.endpoints.send(doc.id, { type: 'customer.deleted', at, customerId: workspaceId }, { input: { id: doc.id } })
    return docs.length
  }

  /** Agent delete cascade: its webhooks go with it. The caller marks the agent first (AgentService.remove marks the agent before its cascades, so asking `exists` after the insert is enough). */
  async removeAllForAgent(workspaceId: string, agentId: string): Promise<void> {
    const docs = await this.deps.repos.webhooks.in(workspaceId).find({ agentId })
    for (const doc of docs) await this.remove(workspaceId, doc.id)
  }

  /** The public shape, with health from the endpoint actor (a fresh one when it has none yet). */
  async present(doc: WebhookDoc): Promise<Webhook> {
    const record = await this.deps.endpoints.read(doc.id)
    const snapshot = record?.snapshot as { context?: WebhookEndpointContext } | undefined
    const view = snapshot?.context
      ? endpointView({ value: record!.state, context: snapshot.context })
      : { enabled: true, delivery: { failuresInARow: 0, lastStatus: null, lastError: null, lastSentAt: null } }
    const lastSentAt = view.delivery.lastSentAt
    return {
      id: doc.id,
      agent: doc.agentId,
      url: doc.url,
      events: doc.events,
      enabled: view.enabled,
      delivery: { ...view.delivery, lastSentAt: lastSentAt === null ? null : iso(lastSentAt) },
      createdAt: doc.createdAt,
    }
  }

  private async target(raw: string): Promise<Target> {
    const rules = { ...this.deps.rules, email: true }
    try {
      const target = parseTarget(raw, rules)
      await checkTargetAddress(target, rules)
      return target
    } catch (err) {
      if (err instanceof TargetError) throw invalid('url', err.message)
      throw err
    }
  }
}

const tooMany = (agentId: string, held: number): Refused => clashes(`agent ${agentId} has ${held} webhooks, the most one agent may have (${MAX_WEBHOOKS_PER_AGENT})`)

/** Creation order: createdAt, then the id, which is time-ordered and unique (src/ids.ts). */
const createdBefore = (a: WebhookDoc, b: WebhookDoc): boolean => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)

/** Omitted → every event (`['*']`); `*` stands alone; repeats are dropped. */
function normaliseEvents(events: string[] | undefined): string[] {
  if (events === undefined) return [ALL_EVENTS]
  const unique = [...new Set(events)]
  if (unique.includes(ALL_EVENTS) && unique.length > 1) throw invalid('events', '"*" already means every event; send it alone')
  return unique
}
