/**
 * Messaging totals (`GET /chatapp/summary`, SPEC.md Usage): over a window of local days in the
 * workspace time zone (`days` 1–90 back from today, or inclusive `from`/`to` dates at most 366
 * days apart): messages received; messages sent by their last receipt (sent, delivered, read,
 * failed, or `noReceipt` when the platform never reported); a series per day (per hour when the
 * window is one day); failures by the platform's error code; and cost by the platform's category
 * (`service` for free-form replies) — every message unpriced until plan pricing lands, so
 * `complete` is false whenever something was sent.
 */
import { PRICES, type Currency } from '../plans'
import { badRequest } from '../../http/errors'
import { addDays, localTime, startOfLocalDay } from '../../zoned-time'
import { iso, type Clock } from '../../clock'
import type { ConversationFeature } from '../conversations'
import type { WorkspaceDoc } from '../workspaces'

/** SPEC.md: `days` 1–90; an explicit range at most 366 days. */
export const MAX_DAYS = 90
export const MAX_RANGE_DAYS = 366
const DATE = /^\d{4}-\d{2}-\d{2}$/

export interface SummaryQuery {
  days?: number
  from?: string
  to?: string
}

type Counts = { sent: number; delivered: number; read: number; failed: number; noReceipt: number }

export class MessagingTotals {
  constructor(private readonly deps: { conversations: ConversationFeature['conversations']; clock: Clock }) {}

  window(workspace: WorkspaceDoc, q: SummaryQuery): { from: string; to: string } {
    const today = localTime(this.deps.clock.now(), workspace.timezone).day
    if (q.from !== undefined || q.to !== undefined) {
      if (q.days !== undefined) throw badRequest('days', 'give days, or from and to, not both')
      if (!q.from || !DATE.test(q.from) || Number.isNaN(Date.parse(q.from))) throw badRequest('from', 'must be a date, YYYY-MM-DD')
      if (!q.to || !DATE.test(q.to) || Number.isNaN(Date.parse(q.to))) throw badRequest('to', 'must be a date, YYYY-MM-DD')
      if (q.from > q.to) throw badRequest('from', 'must not be after to')
      const span = (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1
      if (span > MAX_RANGE_DAYS) throw badRequest('to', `the range is at most ${MAX_RANGE_DAYS} days`)
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
    for (const message of await this.deps.conversations.chatMessages(workspace.id, iso(start), iso(end))) {
      const at = Date.parse(message.createdAt)
      const bucket = buckets.get(bucketOf(at)) ?? buckets.set(bucketOf(at), { sent: 0, received: 0 }).get(bucketOf(at))!
      if (message.author === 'customer') {
        received++
        bucket.received++
        continue
      }
      const delivery = message.delivery as { status?: string; error?: { code?: string } } | undefined
      if (!delivery) continue // never handed to the platform
      bucket.sent++
      const status = delivery.status
      if (status === 'sent' || status === 'delivered' || status === 'read' || status === 'failed') counts[status]++
      else counts.noReceipt++
      if (status === 'failed') errors.set(delivery.error?.code ?? 'unknown', (errors.get(delivery.error?.code ?? 'unknown') ?? 0) + 1)
      const sent = message.sent as { type?: string } | undefined
      const category = sent?.type === 'template' ? ((message.category as string | undefined) ?? 'utility') : 'service'
      byCategory.set(category, (byCategory.get(category) ?? 0) + 1)
    }
    const sentTotal = counts.sent + counts.delivered + counts.read + counts.failed + counts.noReceipt
    return {
      from,
      to,
      timezone: zone,
      grain,
      ...counts,
      received,
      series: [...buckets.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([bucket, v]) => ({ bucket, sent: v.sent, received: v.received })),
      errors: [...errors.entries()].sort((a, b) => b[1] - a[1]).map(([error, n]) => ({ error, n })),
      cost: messagingCost(workspace.currency, byCategory, sentTotal),
    }
  }
}

/**
 * What the platform charges for the messages sent, by its category, at the price list's rates
 * (plans/prices.ts). Every category sent has a rate, so the total is complete; a category the
 * list does not know (none today) would leave it incomplete rather than guess.
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
