/**
 * What happens to a campaign's messages and calls after they are handed over, recorded on the
 * recipient's row (only forward: a late `delivered` never undoes `read`):
 * - broadcast receipts: `delivered`, `read`; a platform's `failed` receipt fails the recipient;
 * - a customer's answer on the chat app: `replied`, on the newest campaign message they had;
 * - a calling campaign's call: answered (completed) → `delivered` (a voicemail left, `hangup:
 *   voicemail`, too, marked `voicemail` on the row); not answered → stays `sent`;
 *   failed or cancelled → `failed` (`call.analysed`, once per try).
 *
 * Every write to one recipient's row goes through one serial lane (`write`), the sender's too, so a
 * receipt racing the sender's own "sent" write is applied after it, never overwritten by it. A
 * receipt that beats even the platform's answer to the send (possible on a webhook platform) is
 * parked until the sender records the message id.
 */
import { SerialQueue } from '../../../actors/serial-queue'
import type { Receipt, ReceiptStatus } from '../../providers/messaging/port'
import type { Collection } from '../../store/port'
import { RANK, type RecipientDoc, type RecipientStatus, recipientsIn } from './repository'

/** Receipts parked for a message id no row carries yet: a few seconds' worth at WhatsApp's 80/s per number is far below this. */
const PARKED_MAX = 1_000
/** Recently sent message ids kept in memory, so their receipts skip a lookup: the last 20,000 (~2 MB), a few seconds of a fast broadcast. */
const RECENT_MAX = 20_000

/** What a call's `call.analysed` carries that matters here. */
export interface CallAnalysedData {
  id: string
  status: string
  reference: string | null
  phone: string | null
  hangup: string | null
}

/** Those fields of a `call.analysed` event's data (the bus carries every event's data untyped). */
export function callAnalysedData(data: Record<string, unknown>): CallAnalysedData {
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  return { id: String(data.id), status: String(data.status), reference: text(data.reference), phone: text(data.phone), hangup: text(data.hangup) }
}

export class CampaignOutcomes {
  private readonly lanes = new SerialQueue()
  /** Message ids the platform has answered with whose row write is not stored yet → row id. */
  private readonly expected = new Map<string, string>()
  /** Recently recorded message id → row id (FIFO, bounded). */
  private readonly recent = new Map<string, string>()
  /** Receipts for ids no row knew when they came (FIFO, bounded: most are other features' messages). */
  private readonly parked = new Map<string, Receipt[]>()

  constructor(
    private readonly d: {
      recipients: Collection<RecipientDoc>
    },
  ) {}

  /** Runs `job` in the row's lane: one write at a time per recipient. */
  write<T>(rowId: string, job: () => Promise<T>): Promise<T> {
    return this.lanes.run(rowId, job)
  }

  /**
   * The sender's record of a message the platform took: call synchronously when the send answers,
   * so a receipt arriving from now on waits for this write.
   */
  sent(rowId: string, platformMessageId: string, fields: Partial<RecipientDoc>): Promise<void> {
    this.expected.set(platformMessageId, rowId)
    return this.write(rowId, async () => {
      await this.d.recipients.update(rowId, { status: 'sent', platformMessageId, ...fields })
      const early = this.parked.get(platformMessageId)
      this.parked.delete(platformMessageId)
      for (const r of early ?? []) await this.applyReceipt(rowId, r)
    }).finally(() => {
      this.expected.delete(platformMessageId)
      this.recent.set(platformMessageId, rowId)
      if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value!)
    })
  }

  async receipt(r: Receipt): Promise<void> {
    // A row is `sent` from the platform's answer on: a `sent` receipt never moves it.
    if (r.status === 'sent') return
    let rowId = this.expected.get(r.platformMessageId) ?? this.recent.get(r.platformMessageId)
    if (!rowId) {
      rowId = (await this.d.recipients.findOne({ platformMessageId: r.platformMessageId }))?.id
      // The sender may have taken the send's answer while we looked.
      rowId ??= this.expected.get(r.platformMessageId)
    }
    if (!rowId) return this.park(r)
    const id = rowId
    await this.write(id, () => this.applyReceipt(id, r))
  }

  async replied(workspaceId: string, phone: string): Promise<void> {
    const [row] = await recipientsIn(this.d.recipients, workspaceId).find({ phone, sentAt: { $ne: null } }, { sort: [['sentAt', -1]], limit: 1 })
    if (row && !row.callId) await this.write(row.id, () => this.forward(row.id, 'replied'))
  }

  async callAnalysed(call: CallAnalysedData): Promise<void> {
    if (!call.reference?.startsWith('cmp_')) return
    const row = (await this.d.recipients.findOne({ callId: call.id })) ?? (call.phone ? await this.d.recipients.findOne({ campaignId: call.reference, phone: call.phone }) : null)
    if (row) {
      await this.write(row.id, async () => {
        if (call.status === 'completed') return this.forward(row.id, 'delivered', { callId: call.id, ...(call.hangup === 'voicemail' ? { voicemail: true } : {}) })
        if (call.status === 'failed' || call.status === 'cancelled') return this.fail(row.id, `the call ${call.status === 'failed' ? 'failed' : 'was cancelled'}`, { callId: call.id })
        return this.forward(row.id, 'sent', { callId: call.id })
      })
    }
  }

  private applyReceipt(rowId: string, r: Receipt): Promise<void> {
    if (r.status === 'failed')
      return this.fail(rowId, r.error ? `${r.error.message} (${r.error.code})` : 'the platform could not deliver it', r.error ? { errorCode: r.error.code } : {}, ['sent', 'delivered'])
    return this.forward(rowId, r.status satisfies ReceiptStatus)
  }

  private park(r: Receipt): void {
    const list = this.parked.get(r.platformMessageId)
    if (list) return void list.push(r)
    this.parked.set(r.platformMessageId, [r])
    if (this.parked.size > PARKED_MAX) this.parked.delete(this.parked.keys().next().value!)
  }

  /** Only forward; a failed or skipped row stays so. `sending` moves too (a call's outcome can beat the sender's write). */
  private async forward(rowId: string, status: RecipientStatus, extra: Record<string, unknown> = {}): Promise<void> {
    const row = await this.d.recipients.get(rowId)
    if (row && RANK[status] > RANK[row.status] && row.status !== 'failed' && row.status !== 'skipped') await this.d.recipients.update(row.id, { status, ...extra })
  }

  /** Fails a row still in one of `from` (default: anything short of an end). */
  private async fail(rowId: string, error: string, extra: Record<string, unknown> = {}, from?: RecipientStatus[]): Promise<void> {
    const row = await this.d.recipients.get(rowId)
    if (!row || (from ? !from.includes(row.status) : RANK[row.status] >= RANK.failed)) return
    await this.d.recipients.update(row.id, { status: 'failed', error, ...extra })
  }
}
