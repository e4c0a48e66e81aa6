/**
 * The usage ledger: one record per billable unit (a reply, a call minute, a message), with what
 * it cost the developer. Spend and usage totals are store aggregations over it.
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export interface UsageRecordDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  developerId: string
  kind: 'reply' | 'call_minute' | 'message' | 'analysis' | 'reply_charge'
  quantity: number
  costMicro: number
  createdAt: string
}

export const usageSpec: CollectionSpec = {
  name: 'usage_records',
  indexes: [
    { name: 'workspace_created', fields: [['workspaceId', 1], ['createdAt', -1], ['id', -1]] },
    { name: 'developer_created', fields: [['developerId', 1], ['createdAt', -1]] },
  ],
}

export class UsageLedger {
  constructor(readonly records: Collection<UsageRecordDoc>) {}

  static async open(store: DocumentStore): Promise<UsageLedger> {
    return new UsageLedger(await store.collection<UsageRecordDoc>(usageSpec))
  }

  /** What a workspace's usage cost the developer since `since` (ISO instant). */
  spendSince(workspaceId: string, since: string): Promise<number> {
    return this.records.sum('costMicro', { workspaceId, createdAt: { $gte: since } })
  }
}

/** The 1st of the current UTC month, as SPEC.md defines `spendThisMonthMicro`. */
export function monthStart(nowMs: number): string {
  const d = new Date(nowMs)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString()
}
