/**
 * Webhooks as stored: v1 endpoints (`webhooks`), legacy endpoints (`legacy_webhook_endpoints`)
 * and legacy delivery records (`legacy_webhook_deliveries`). Signing secrets are stored sealed
 * (src/crypto/secrets.ts). Delivery health and delivery status live in each one's actor snapshot,
 * not here: the chart is the only writer of state.
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'
import { type LegacyNumberDoc, legacyNumbersSpec } from './endpoint-numbers'

export interface WebhookDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  agentId: string
  /** An https URL or an email address, as the caller gave it (normalised). */
  url: string
  targetKind: 'url' | 'email'
  /** v1 event types, or `['*']`. */
  events: string[]
  secretSealed: string
  createdAt: string
  updatedAt: string
}

export const webhooksSpec: CollectionSpec = workspaceSpec('webhooks', [
  {
    name: 'workspace_agent_created',
    fields: [
      ['workspaceId', 1],
      ['agentId', 1],
      ['createdAt', -1],
      ['id', -1],
    ],
  },
])

export interface LegacyEndpointDoc {
  [field: string]: unknown
  /** `lwe_<workspaceId>_<number>` (`lwe_<number>` before numbers were per account): the store wants string ids. */
  id: string
  /** The id the legacy surface shows: per account, never reused (endpoint-numbers.ts). */
  number: number
  workspaceId: string
  url: string
  eventTypes: string[]
  agentId: string | null
  /** The agent's legacy integer id (what `agent_id` shows); absent on endpoints from before agents had one. */
  agentNumber?: number | null
  description: string | null
  isActive: boolean
  maxRetries: number
  timeoutMs: number
  secretSealed: string
  createdAt: string
  updatedAt: string
}

export const legacyEndpointsSpec: CollectionSpec = {
  name: 'legacy_webhook_endpoints',
  indexes: [
    // Lookups by (account, number), lists newest first by number, and a backstop against two
    // endpoints of one account sharing a number.
    {
      name: 'workspace_number',
      fields: [
        ['workspaceId', 1],
        ['number', -1],
      ],
      unique: true,
    },
  ],
}

export interface LegacyDeliveryDoc {
  [field: string]: unknown
  /** Also the id of its `webhookDelivery` actor, which holds its status. */
  id: string
  workspaceId: string
  endpointId: string
  eventId: string
  eventType: string
  createdAt: string
  /** The event's subject (events/catalogue.ts subjectOf); absent when it names none. */
  subject?: string
  /** Deliveries of the same endpoint and subject still unsettled when this one was queued: it waits for them (subject-turns.ts). */
  after?: string[]
  /** The last attempt number claimed (written before its request leaves) and its retry round. */
  lastAttempt?: number
  claimedRound?: number
  /** Written when an attempt succeeded, before the chart hears of it: nothing is sent after it. */
  succeededAt?: number
  succeededStatus?: number | null
}

export const legacyDeliveriesSpec: CollectionSpec = {
  name: 'legacy_webhook_deliveries',
  indexes: [
    {
      name: 'endpoint_created',
      fields: [
        ['endpointId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    // The deliveries a new one of the same subject must wait for.
    {
      name: 'endpoint_subject',
      fields: [
        ['endpointId', 1],
        ['subject', 1],
      ],
    },
  ],
}

export interface WebhookRepos {
  webhooks: WorkspaceCollection<WebhookDoc>
  endpoints: WorkspaceCollection<LegacyEndpointDoc>
  /** Claimed legacy endpoint numbers: each account's high-water mark (endpoint-numbers.ts). */
  endpointNumbers: WorkspaceCollection<LegacyNumberDoc>
  deliveries: Collection<LegacyDeliveryDoc>
}

export async function openWebhookRepos(store: DocumentStore): Promise<WebhookRepos> {
  const [webhooks, endpoints, endpointNumbers, deliveries] = await Promise.all([
    store.collection<WebhookDoc>(webhooksSpec),
    store.collection<LegacyEndpointDoc>(legacyEndpointsSpec),
    store.collection<LegacyNumberDoc>(legacyNumbersSpec),
    store.collection<LegacyDeliveryDoc>(legacyDeliveriesSpec),
  ])
  return { webhooks: new WorkspaceCollection(webhooks), endpoints: new WorkspaceCollection(endpoints), endpointNumbers: new WorkspaceCollection(endpointNumbers), deliveries }
}

/** Which subscriptions an event reaches (events lists are small; the store cannot match inside arrays). */
export const subscribes = (events: string[], type: string): boolean => events.includes('*') || events.includes(type)
