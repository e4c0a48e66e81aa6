/**
 * The platform's receipts applied to the stored message each reports. A receipt can overtake the
 * write of its message: the platform answers the send, and its webhook (the sandbox's at once) may
 * arrive before our commit of the row that carries the platform's id. A receipt whose message is
 * not stored yet is looked for again a few times before it is let go.
 */
import { iso } from '../../clock'
import type { Logger } from '../../logger'
import type { Receipt } from '../../providers/messaging/port'

/** Receipts only move a message forward (a late `sent` never undoes `read`); `failed` ends it. */
const ORDER: Record<string, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 }

/**
 * Waits before each new look for a message not stored yet: a send's commit takes milliseconds on
 * a quiet host; on a loaded 2-core test host it was seen to take over a second, so the looks reach
 * about 4 s after the receipt.
 */
const RETRY_MS = [20, 100, 400, 1_000, 2_500]

interface StoredMessage {
  id: string
  delivery?: unknown
}

export interface ReceiptDeps {
  byPlatformId: (platformMessageId: string) => Promise<StoredMessage | null>
  /** The message a receipt's `ref` names (our id, echoed by WhatsApp): found though its platform id was never stored. */
  byId: (id: string) => Promise<StoredMessage | null>
  setDelivery: (messageId: string, delivery: { platformMessageId: string; status: string; at: string; error?: Receipt['error'] }) => Promise<unknown>
  logger: Logger
}

export function applyReceipts(d: ReceiptDeps): (r: Receipt) => Promise<void> {
  const apply = async (r: Receipt): Promise<boolean> => {
    const message = (await d.byPlatformId(r.platformMessageId)) ?? (r.ref ? await byRef(r.ref, r.platformMessageId) : null)
    if (!message) return false
    const current = (message.delivery as { status?: string } | undefined)?.status ?? 'accepted'
    if ((ORDER[r.status] ?? 0) <= (ORDER[current] ?? 0) || current === 'failed') return true
    await d.setDelivery(message.id, { platformMessageId: r.platformMessageId, status: r.status, at: iso(r.at), ...(r.error ? { error: r.error } : {}) })
    return true
  }
  // A reply a crash caught between the platform's answer and our write (messaging/answers.ts): no
  // platform id stored, or `unknown`; one that holds another platform id is not this receipt's.
  const byRef = async (ref: string, platformMessageId: string): Promise<StoredMessage | null> => {
    const message = await d.byId(ref)
    const stored = (message?.delivery as { platformMessageId?: string } | undefined)?.platformMessageId
    return message && (stored === undefined || stored === platformMessageId) ? message : null
  }
  return async (r) => {
    if (await apply(r)) return
    // Not stored yet: later looks run on their own, so the platform's webhook is answered now.
    void (async () => {
      for (const ms of RETRY_MS) {
        await Bun.sleep(ms)
        if (await apply(r)) return
      }
      d.logger.debug({ receipt: r.platformMessageId, status: r.status }, 'a receipt for no message of ours')
    })().catch((err) => d.logger.warn({ err, receipt: r.platformMessageId }, 'receipt not recorded'))
  }
}
