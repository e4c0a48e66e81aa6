/**
 * The usage answer (docs/spec.md Usage and analytics): plan, the current UTC month as the period, the
 * reply allowance, the wallet (null on Free; absent inside a customer, which is billed to the
 * developer), and replies per UTC day over the last `days` days.
 *
 * `daily` counts the replies of the workspace asked about: a developer's own view includes its
 * customers' replies (it pays for them), a customer's view only its own.
 */

import { PLANS } from '../../catalog/plans'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Filter } from '../../store/port'
import { monthStart, nextMonthStart, type UsageLedger } from './ledger'
import type { Meter } from './meter'
import type { Wallet } from './wallet'

const DAY_MS = 86_400_000

export interface UsageReport {
  plan: string
  currency: string
  period: { start: string; end: string }
  replies: { used: number; included: number | null; metered: boolean; stopped: boolean }
  wallet?: Wallet | null
  billedTo?: 'developer'
  daily: { day: string; replies: number }[]
}

export class UsageReports {
  constructor(private readonly deps: { ledger: UsageLedger; meter: Meter; clock: Clock }) {}

  async of(workspace: WorkspaceDoc, days: number): Promise<UsageReport> {
    const now = this.deps.clock.now()
    const developer = (await this.deps.meter.payer(workspace)) ?? workspace
    const today = Date.parse(`${iso(now).slice(0, 10)}T00:00:00.000Z`)
    const start = today - (days - 1) * DAY_MS
    const scope: Filter = workspace.kind === 'customer' ? { workspaceId: workspace.id } : { developerId: workspace.id }
    const [replies, groups] = await Promise.all([
      this.deps.meter.replyAllowance(workspace, { exact: true }),
      this.deps.ledger.records.group({ ...scope, kind: 'reply', createdAt: { $gte: iso(start) } }, { by: { path: 'createdAt', unit: 'day' } }),
    ])
    const perDay = new Map(groups.map((g) => [String(g.key), g.count]))
    const daily = Array.from({ length: days }, (_, i) => iso(start + i * DAY_MS).slice(0, 10)).map((day) => ({ day, replies: perDay.get(day) ?? 0 }))
    const report: UsageReport = {
      plan: developer.plan,
      currency: developer.currency,
      period: { start: monthStart(now), end: nextMonthStart(now) },
      replies,
      daily,
    }
    if (workspace.kind === 'customer') return { ...report, billedTo: 'developer' }
    const wallet = PLANS[developer.plan].wallet ? await this.deps.meter.settledWallet(developer) : null
    return { ...report, wallet }
  }
}
