/**
 * Campaigns as stored: the campaign's row (the read model its actor projects onto) and one row per
 * recipient, which is where progress lives. A recipient moves pending → sending → sent → delivered →
 * read → replied, or ends failed / skipped; `sending` is written before the message or call is
 * handed over, so after a crash nobody is sent to twice (a row left `sending` is failed as
 * `interrupted`, never sent again).
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import { type ScopedCollection, WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export const CAMPAIGN_STATUSES = ['draft', 'sending', 'paused', 'sent', 'failed', 'cancelled'] as const
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number]

export interface CampaignDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  agentId: string
  name: string
  kind: 'chatapp' | 'voice'
  template: string | null
  /** The template's language when it was chosen (its oldest approved one). */
  language: string | null
  purpose: string | null
  recipients: number
  status: CampaignStatus
  scheduledAt: string | null
  startedAt: string | null
  finishedAt: string | null
  createdAt: string
  lastError: string | null
}

export const RECIPIENT_STATUSES = ['pending', 'sending', 'sent', 'delivered', 'read', 'replied', 'failed', 'skipped'] as const
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number]

/** How far a recipient got: receipts and answers only move it forward. */
export const RANK: Record<RecipientStatus, number> = { pending: 0, sending: 1, sent: 2, delivered: 3, read: 4, replied: 5, failed: 6, skipped: 6 }

export interface RecipientDoc {
  [field: string]: unknown
  /** `{campaignId}:{index}` */
  id: string
  campaignId: string
  workspaceId: string
  index: number
  phone: string
  status: RecipientStatus
  /** The platform's id of the message (receipts name it) or the call's id. */
  platformMessageId?: string
  callId?: string
  error?: string
  /** The platform's error code of a failed message (messaging totals group failures by it). */
  errorCode?: string
  sentAt?: string
  /** When the platform refused a broadcast message outright (it was never sent). */
  refusedAt?: string
  /** The template category a broadcast message is priced by. */
  category?: string
  createdAt: string
}

export const campaignsSpec: CollectionSpec = workspaceSpec('campaigns')

export const recipientsSpec: CollectionSpec = {
  name: 'campaign_recipients',
  indexes: [
    // The sender walks a campaign's pending recipients in order; counts count each status on it.
    {
      name: 'campaign_status_index',
      fields: [
        ['campaignId', 1],
        ['status', 1],
        ['index', 1],
      ],
    },
    // The console lists a campaign's recipients in their given order, a page at a time.
    {
      name: 'campaign_index',
      fields: [
        ['campaignId', 1],
        ['index', 1],
      ],
    },
    { name: 'platform_message', fields: [['platformMessageId', 1]], sparse: true },
    { name: 'call', fields: [['callId', 1]], sparse: true },
    // A customer's answer counts for the newest campaign message they had.
    {
      name: 'workspace_phone_sent',
      fields: [
        ['workspaceId', 1],
        ['phone', 1],
        ['sentAt', -1],
      ],
    },
  ],
}

export const openCampaigns = async (store: DocumentStore): Promise<WorkspaceCollection<CampaignDoc>> => new WorkspaceCollection(await store.collection<CampaignDoc>(campaignsSpec))
export const openRecipients = (store: DocumentStore): Promise<Collection<RecipientDoc>> => store.collection<RecipientDoc>(recipientsSpec)

/**
 * One workspace's recipient rows (a campaign's creation, its broadcast totals, a reply from a
 * person). The sender and the receipts name a row by id, by campaign or by the platform's message
 * id, and keep the collection.
 */
export const recipientsIn = (recipients: Collection<RecipientDoc>, workspaceId: string): ScopedCollection<RecipientDoc> => new WorkspaceCollection(recipients).in(workspaceId)
