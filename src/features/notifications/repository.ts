/** Notifications as stored: one per thing the service told a developer (docs/spec.md Events rule 8). */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export interface NotificationDoc {
  [field: string]: unknown
  id: string
  /** The recipient: always a developer workspace. */
  workspaceId: string
  /** The customer it is about, when it happened inside one; null for the developer's own workspace. */
  customerId: string | null
  customerName: string | null
  /** What happened, e.g. `webhook.disabled`. */
  kind: string
  title: string
  body: string
  data: Record<string, unknown>
  createdAt: string
}

export const notificationsSpec: CollectionSpec = {
  name: 'notifications',
  indexes: [
    {
      name: 'recipient_created',
      fields: [
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    {
      name: 'customer_created',
      fields: [
        ['customerId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
  ],
}

export type NotificationRepo = Collection<NotificationDoc>
export const openNotifications = (store: DocumentStore): Promise<NotificationRepo> => store.collection<NotificationDoc>(notificationsSpec)
