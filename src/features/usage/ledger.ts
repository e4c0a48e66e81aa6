/**
 * The usage ledger: one record per billable act (a reply, a call's minutes, an analysis pass, a
 * message sent, a reply charge, a month of a number's rent), attributed to the workspace it
 * happened in and the developer who pays, and priced when it happened. Spend, allowances, the
 * wallet and call debits are store aggregations over it.
 *
 * A record's id is derived from the act (`use_reply_<messageId>`, `use_call_<tryId>`, …), so
 * recording the same act twice — a retried effect, a restarted process — stores it once.
 */
import { type Collection, type CollectionSpec, type DocumentStore, DuplicateKeyError } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export const USAGE_KINDS = ['reply', 'call_minute', 'message', 'analysis', 'reply_charge', 'phone_rent'] as const
export type UsageKind = (typeof USAGE_KINDS)[number]

export interface UsageRecordDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  developerId: string
  kind: UsageKind
  quantity: number
  /** Price of one unit when the act happened (0 where the plan includes it). */
  unitPriceMicro?: number
  costMicro: number
  currency?: string
  plan?: string
  createdAt: string
}

export const usageSpec: CollectionSpec = workspaceSpec('usage_records', [
  {
    name: 'developer_created',
    fields: [
      ['developerId', 1],
      ['createdAt', -1],
    ],
  },
  {
    name: 'developer_kind_created',
    fields: [
      ['developerId', 1],
      ['kind', 1],
      ['createdAt', -1],
    ],
  },
])

export class UsageLedger {
  /** One workspace's records; `records` is the developer-wide ledger (bills and plans are per developer). */
  private readonly byWorkspace: WorkspaceCollection<UsageRecordDoc>

  constructor(readonly records: Collection<UsageRecordDoc>) {
    this.byWorkspace = new WorkspaceCollection(records)
  }

  static async open(store: DocumentStore): Promise<UsageLedger> {
    return new UsageLedger(await store.collection<UsageRecordDoc>(usageSpec))
  }

  /** Stores the record once: a second write of the same act returns the first record unchanged. */
  async record(doc: UsageRecordDoc): Promise<{ doc: UsageRecordDoc; fresh: boolean }> {
    try {
      return { doc: await this.records.insert(doc), fresh: true }
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err
      const first = await this.records.get(doc.id)
      if (!first) throw err
      return { doc: first, fresh: false }
    }
  }

  /** What a workspace's usage cost the developer since `since` (ISO instant); of those `kinds` only, when given. */
  spendSince(workspaceId: string, since: string, kinds?: UsageKind[]): Promise<number> {
    return this.byWorkspace.in(workspaceId).sum('costMicro', { createdAt: { $gte: since }, ...(kinds ? { kind: { $in: kinds } } : {}) })
  }
}

/** The 1st of the current UTC month, as docs/spec.md defines `spendThisMonthMicro`. */
export function monthStart(nowMs: number): string {
  const d = new Date(nowMs)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString()
}

/** The 1st of the next UTC month: where the current period ends (exclusive). */
export function nextMonthStart(nowMs: number): string {
  const d = new Date(nowMs)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString()
}

/** `at` plus `n` calendar months in UTC, the day clamped to the month's last (Jan 31 + 1 = Feb 28). */
export function addMonths(atMs: number, n: number): number {
  const d = new Date(atMs)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth() + n
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  return Date.UTC(y, m, Math.min(d.getUTCDate(), last), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}
