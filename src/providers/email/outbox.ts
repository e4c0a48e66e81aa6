/**
 * The embedded email transport: without SMTP_URL each email is kept in the store, newest first,
 * readable at GET /console/outbox, so email webhooks work out of the box and a developer sees
 * exactly what would have been sent (docs/spec.md: "an email address receives one email per event").
 */
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import type { EmailMessage, EmailReceipt, EmailSender } from './port'

export interface OutboxEmailDoc {
  [field: string]: unknown
  id: string
  to: string
  subject: string
  text: string
  eventId: string | null
  workspaceId: string | null
  createdAt: string
}

export const outboxSpec: CollectionSpec = {
  name: 'email_outbox',
  indexes: [
    // GET /console/outbox, newest first (the port's page order).
    {
      name: 'created',
      fields: [
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    // Customer erasure.
    { name: 'workspace', fields: [['workspaceId', 1]] },
  ],
}

export type OutboxRepo = Collection<OutboxEmailDoc>
export const openOutbox = (store: DocumentStore): Promise<OutboxRepo> => store.collection<OutboxEmailDoc>(outboxSpec)

/** SMTP's "requested mail action okay, completed": what a kept email reports as its status. */
const KEPT = 250

export class OutboxEmailSender implements EmailSender {
  constructor(
    private readonly outbox: OutboxRepo,
    private readonly clock: Clock,
  ) {}

  async send(message: EmailMessage): Promise<EmailReceipt> {
    await this.outbox.insert({
      id: newId('em'),
      to: message.to,
      subject: message.subject,
      text: message.text,
      eventId: message.eventId ?? null,
      workspaceId: message.workspaceId ?? null,
      createdAt: iso(this.clock.now()),
    })
    return { code: KEPT, response: 'kept in the outbox (no SMTP_URL set): GET /console/outbox' }
  }

  async close(): Promise<void> {}
}
