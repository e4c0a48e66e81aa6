/**
 * Notifications (docs/spec.md Events rule 8): anything the service would tell a customer (a webhook
 * switched off, a template rejected, a campaign in trouble, low balance) goes to the developer,
 * with the customer's name in the title; what happens in the developer's own workspace goes to
 * the developer as it is. They are stored and read in the console.
 *
 * `notify` is idempotent by `key`: effects that notify may run again after a crash, and the same
 * key stores the same notification once.
 */
import { createHash } from 'node:crypto'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc, WorkspaceLookup } from '../../kernel/tenancy'
import type { Filter, PageAfter } from '../../store/port'
import type { NotificationDoc, NotificationRepo } from './repository'

export interface NotifyInput {
  /** Where it happened: a developer workspace or a customer's. */
  workspaceId: string
  kind: string
  title: string
  body: string
  data?: Record<string, unknown>
  /** Same key, same notification (stored once). */
  key: string
}

export interface Notification {
  id: string
  kind: string
  title: string
  body: string
  customer: { id: string; name: string } | null
  data: Record<string, unknown>
  createdAt: string
}

// 20 hex characters = 80 bits of the key's hash: distinct keys never meet in practice.
const ID_HASH_CHARS = 20

export class NotificationService {
  constructor(
    private readonly repo: NotificationRepo,
    private readonly workspace: WorkspaceLookup,
    private readonly clock: Clock,
  ) {}

  /** Stores the notification for the developer who owns `workspaceId`; null when that workspace is gone. */
  async notify(input: NotifyInput): Promise<NotificationDoc | null> {
    const where = await this.workspace(input.workspaceId)
    if (!where) return null
    const customer = where.kind === 'customer' ? where : null
    const recipient = customer ? customer.parentId : where.id
    if (!recipient) return null
    const id = `ntf_${createHash('sha256').update(input.key).digest('hex').slice(0, ID_HASH_CHARS)}`
    const existing = await this.repo.get(id)
    if (existing) return existing
    const doc: NotificationDoc = {
      id,
      workspaceId: recipient,
      customerId: customer?.id ?? null,
      customerName: customer?.name ?? null,
      kind: input.kind,
      // Rule 8: the customer's name in the title, so a developer with many customers sees whose it is.
      title: customer ? `[${customer.name}] ${input.title}` : input.title,
      body: input.body,
      data: input.data ?? {},
      createdAt: iso(this.clock.now()),
    }
    await this.repo.upsert(doc)
    return doc
  }

  /** A developer's notifications (all of its customers' too), or one customer's; newest first. */
  list(ws: WorkspaceDoc, limit: number, after: PageAfter | null): Promise<NotificationDoc[]> {
    const filter: Filter = ws.kind === 'customer' ? { customerId: ws.id } : { workspaceId: ws.id }
    return this.repo.page(filter, limit, after)
  }

  present(doc: NotificationDoc): Notification {
    return {
      id: doc.id,
      kind: doc.kind,
      title: doc.title,
      body: doc.body,
      customer: doc.customerId ? { id: doc.customerId, name: doc.customerName ?? '' } : null,
      data: doc.data,
      createdAt: doc.createdAt,
    }
  }
}
