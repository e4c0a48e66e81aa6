/**
 * A broadcast's messages as the messaging totals count chat-app messages (`GET /chatapp/summary`).
 * They are not written into conversations: each lives on its recipient's row, which keeps when it
 * was handed over (`sentAt`, or `refusedAt` when the platform refused it outright), how far its
 * receipts got, the platform's error code of a failure, and the template's category.
 */
import type { Collection } from '../../store/port'
import type { SentMessage } from '../messaging/public'
import { type RecipientDoc, type RecipientStatus, recipientsIn } from './repository'

/**
 * A row's status as the message's last receipt. A reply means the person had the message open
 * (the row then stops recording receipts), so it counts as read.
 */
const RECEIPT: Partial<Record<RecipientStatus, SentMessage['status']>> = { sent: 'sent', delivered: 'delivered', read: 'read', replied: 'read', failed: 'failed' }

/** The broadcast messages of a workspace handed to the platform in [from, to) (ISO instants). */
export async function broadcastSends(recipients: Collection<RecipientDoc>, workspaceId: string, from: string, to: string): Promise<SentMessage[]> {
  const window = { $gte: from, $lt: to }
  const rows = recipientsIn(recipients, workspaceId)
  const [taken, refused] = await Promise.all([rows.find({ platformMessageId: { $exists: true }, sentAt: window }), rows.find({ refusedAt: window })])
  return [
    ...taken.map((r) => ({
      platformMessageId: r.platformMessageId!,
      at: r.sentAt!,
      status: RECEIPT[r.status] ?? null,
      errorCode: r.status === 'failed' ? (r.errorCode ?? null) : null,
      category: r.category ?? 'unknown',
    })),
    ...refused.map((r) => ({ platformMessageId: null, at: r.refusedAt!, status: 'failed' as const, errorCode: r.errorCode ?? null, category: r.category ?? 'unknown' })),
  ]
}
