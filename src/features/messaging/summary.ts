/**
 * Messaging totals (`GET /chatapp/summary`, docs/spec.md Usage): over a window of local days in the
 * workspace time zone (`days` 1–90 back from today, or inclusive `from`/`to` dates at most 366
 * days apart): messages received; messages sent (`sent`: every one, whatever became of it), of them
 * those `delivered` (a read message was delivered too) and `read`, those that `failed`, and those
 * the platform never reported on (`noReceipt`); a series per day (per hour when the window is one
 * day) whose `sent` add up to the total; failures by the platform's error code; and cost by the
 * platform's category (`service` for free-form replies). Messages sent outside conversations (a broadcast's) come from
 * the features that send them (`countSends`), each counted once.
 */
import { type Currency, PRICES } from '../../catalog/prices'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { invalid } from '../../refusals'
import { addDays, localTime, startOfLocalDay } from '../../zoned-time'
import type { ConversationFeature } from '../conversations/public'

/** docs/spec.md: `days` 1–90; an explicit range at most 366 days. */
export const MAX_DAYS = 90
export const MAX_RANGE_DAYS = 366
const DATE = /^\d{4}-\d{2}-\d{2}$/

export interface SummaryQuery {
  days?: number
  from?: string
  to?: string
}

type Counts = { sent: number; delivered: number; read: number; failed: number; noReceipt: number }
type Receipt = 'sent' | 'delivered' | 'read' | 'failed'

/** A chat-app message sent outside any conversation (a broadcast's), as the totals count it. */
export interface SentMessage {
  /** The platform's id; null when the platform refused the message outright. */
  platformMessageId: string | null
  /** When it was handed to the platform (ISO instant). */
  at: string
  /** Its last receipt; null when the platform never reported on it. */
  status: Receipt | null
  /** The platform's error code when it failed. */
  errorCode: string | null
  /** The category it is priced by (a template's). */
  category: string
}

/** The messages a feature sent outside conversations for a workspace, handed over in [from, to). */
export type SendSource = (workspaceId: string, from: string, to: string) => Promise<SentMessage[]>

export class MessagingTotals {
  private readonly sources: SendSource[] = []

  constructor(private readonly deps: { conversations: ConversationFeature['conversations']; clock: Clock }) {}

  /** Counts what `source` sent outside conversations too (campaigns: its broadcasts). */
  countSends(source: SendSource): void {
    this.sources.push(source)
  }

  window(workspace: WorkspaceDoc, q: SummaryQuery): { from: string; to: string } {
    const today = localTime(this.deps.clock.now(), workspace.timezone).day
    if (q.from !== undefined || q.to !== undefined) {
      if (q.days !== undefined) throw invalid('days', 'give days, or from and to, not both')
      if (!q.from || !DATE.test(q.from) || Number.isNaN(Date.parse(q.from))) throw invalid('from', 'must be a date, YYYY-MM-DD')
      if (!q.to || !DATE.test(q.to) || Number.isNaN(Date.parse(q.to))) throw invalid('to', 'must be a date, YYYY-MM-DD')
      if (q.from > q.to) throw invalid('from', 'must not be after to')
      const span = (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1
      if (span > MAX_RANGE_DAYS) throw invalid('to', `the range is at most ${MAX_RANGE_DAYS} days`)
      return { from: q.from, to: q.to }
    }
    const days = q.days ?? 7
    return { from: addDays(today, -(days - 1)), to: today }
  }

  async summary(workspace: WorkspaceDoc, q: SummaryQuery) {
    const { from, to } = this.window(workspace, q)
    const zone = workspace.timezone
    const start = startOfLocalDay(from, zone)
    const end = startOfLocalDay(addDays(to, 1), zone)
    const grain = from === to ? 'hour' : 'day'
    const buckets = new Map<string, { sent: number; received: number }>()
    const bucketOf = (ms: number) => {
      const l = localTime(ms, zone)
      return grain === 'hour' ? `${l.day}T${String(l.hour).padStart(2, '0')}:00` : l.day
    }
    if (grain === 'day') for (let d = from; d <= to; d = addDays(d, 1)) buckets.set(d, { sent: 0, received: 0 })
    else for (let h = 0; h < 24; h++) buckets.set(`${from}T${String(h).padStart(2, '0')}:00`, { sent: 0, received: 0 })
    const counts: Counts = { sent: 0, delivered: 0, read: 0, failed: 0, noReceipt: 0 }
    const errors = new Map<string, number>()
    const byCategory = new Map<string, number>()
    let received = 0
    const bucketAt = (at: number) => buckets.get(bucketOf(at)) ?? buckets.set(bucketOf(at), { sent: 0, received: 0 }).get(bucketOf(at))!
    const countSent = (at: number, status: string | null | undefined, errorCode: string | null | undefined, category: string) => {
      bucketAt(at).sent++
      counts.sent++
      // Cumulative like a campaign's counts: a read message was delivered first.
      if (status === 'delivered' || status === 'read') counts.delivered++
      if (status === 'read') counts.read++
      if (status === 'failed') counts.failed++
      if (status !== 'sent' && status !== 'delivered' && status !== 'read' && status !== 'failed') counts.noReceipt++
      if (status === 'failed') errors.set(errorCode ?? 'unknown', (errors.get(errorCode ?? 'unknown') ?? 0) + 1)
      byCategory.set(category, (byCategory.get(category) ?? 0) + 1)
    }
    // Platform ids counted from conversations: a message another feature also reports is counted once.
    const counted = new Set<string>()
    for (const message of await this.deps.conversations.chatMessages(workspace.id, iso(start), iso(end))) {
      const at = Date.parse(message.createdAt)
      if (message.author === 'customer') {
        received++
        bucketAt(at).received++
        continue
      }
      const delivery = message.delivery as { status?: string; platformMessageId?: string; error?: { code?: string } } | undefined
      if (!delivery) continue // never handed to the platform
      if (delivery.platformMessageId) counted.add(delivery.platformMessageId)
      const sent = message.sent as { type?: string } | undefined
      const category = sent?.type === 'template' ? ((message.category as string | undefined) ?? 'utility') : 'service'
      countSent(at, delivery.status, delivery.error?.code, category)
    }
    for (const source of this.sources) {
      for (const m of await source(workspace.id, iso(start), iso(end))) {
        if (m.platformMessageId !== null && counted.has(m.platformMessageId)) continue
        if (m.platformMessageId !== null) counted.add(m.platformMessageId)
        countSent(Date.parse(m.at), m.status, m.errorCode, m.category)
      }
    }
    return {
      from,
      to,
      timezone: zone,
      grain,
      ...counts,
      received,
      series: [...buckets.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([bucket, v]) => ({ bucket, sent: v.sent, received: v.received })),
      errors: [...errors.entries()].sort((a, b) => b[1] - a[1]).map(([error, n]) => ({ error, n })),
      cost: messagingCost(workspace.currency, byCategory, counts.sent),
    }
  }
}

/**
 * What the platform charges for the messages sent, by its category, at the price list's rates
 * (src/catalog/prices.ts). Every category sent has a rate, so the total is complete; a category the
 * list does not know (a broadcast row that kept none) leaves it incomplete rather than guess.
 */
function messagingCost(currency: Currency, byCategory: Map<string, number>, sentTotal: number) {
  const rates = PRICES[currency].messageMicro as Record<string, number | undefined>
  const items = [...byCategory.entries()].map(([category, messages]) => ({ category, messages, costMicro: messages * (rates[category] ?? 0) }))
  return {
    currency,
    totalMicro: items.reduce((sum, i) => sum + i.costMicro, 0),
    complete: sentTotal === 0 || items.every((i) => rates[i.category] !== undefined),
    byCategory: items,
  }
}
