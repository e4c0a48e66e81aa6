/**
 * The meter: every billable act goes through `charge`, which prices it by the paying developer's
 * plan and currency at that moment, writes its one ledger record, and lets the wallet react (a
 * low-balance notice). The gates answer whether the account may still run an act: replies stop
 * when the plan's allowance is used up (or, metered, when the wallet cannot pay one), calls are
 * refused when the wallet (or Free's included minutes) cannot cover a minute.
 *
 * Who pays: a customer's acts are the developer's (docs/spec.md: "billed to the developer"); plan and
 * currency are read from the developer's own workspace.
 */

import { PLANS } from '../../catalog/plans'
import { billedMinutes, type MessageCategory, PRICES, replyChargeMicro, type VoiceTier } from '../../catalog/prices'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { notCovered } from '../../refusals'
import type { WorkspaceRepo } from '../workspaces/public'
import { monthStart, type UsageKind, type UsageLedger, type UsageRecordDoc } from './ledger'
import type { RentBook } from './rent'
import type { WalletService } from './wallet'

/** What was done, with what the price depends on. */
export type Act =
  | { kind: 'reply' }
  | { kind: 'call_minute'; seconds: number; tier: VoiceTier }
  | { kind: 'analysis' }
  | { kind: 'message'; category: MessageCategory }
  | { kind: 'reply_charge'; category: MessageCategory }

export interface ChargeInput {
  /** The ledger id, derived from the act so a repeat stores nothing new. */
  id: string
  workspaceId: string
  act: Act
  /** References kept on the record (conversationId, callId, messageId, …). */
  refs?: Record<string, unknown>
  /** When it happened; now by default. */
  at?: number
}

export interface ReplyAllowance {
  used: number
  included: number | null
  metered: boolean
  stopped: boolean
}

/**
 * How old a month's reply count the reply gate may use, on the service clock (the same second as
 * the wallet's, wallet.ts GATE_WALLET_MS). Replies charged on this instance add to it at once.
 */
const GATE_COUNT_MS = 1_000
/**
 * Records older than this are taken as all written (a reply's record is inserted milliseconds
 * after its `createdAt`), so the count before it is kept and only the last seconds are counted
 * again: a busy account's whole month is counted once, not every second (bench:messaging's p99).
 */
const SETTLE_MS = 5_000

interface ReplyCount {
  month: string
  /** Records before `until` counted once and kept. */
  settled: number
  until: string
  at: number
  used: number
}

/** Why a chat-app message is not sent when the wallet cannot pay for it. */
export const cannotPayMessage = (category: MessageCategory, b: { availableMicro: number; priceMicro: number }) =>
  `the balance cannot pay for a ${category} message: ${b.availableMicro} micro-units available, one costs ${b.priceMicro}; top up the wallet`

export class Meter {
  private readonly replyCounts = new Map<string, ReplyCount>()

  constructor(
    private readonly deps: {
      ledger: UsageLedger
      wallet: WalletService
      rent: RentBook
      workspaces: WorkspaceRepo
      clock: Clock
    },
  ) {}

  /** The developer who pays for a workspace (itself for a developer workspace). */
  async payer(workspace: WorkspaceDoc | string): Promise<WorkspaceDoc | null> {
    const ws = typeof workspace === 'string' ? await this.deps.workspaces.get(workspace) : workspace
    if (!ws) return null
    return ws.parentId ? this.deps.workspaces.get(ws.parentId) : ws
  }

  /** Unit price and quantity of an act on the developer's plan. */
  price(developer: WorkspaceDoc, act: Act): { quantity: number; unitPriceMicro: number } {
    const plan = PLANS[developer.plan]
    const prices = PRICES[developer.currency]
    // Free pays nothing: its allowances are what it gets.
    const paid = plan.wallet
    switch (act.kind) {
      case 'reply':
        // Included replies are paid by the plan; only a metered plan pays each one.
        return { quantity: 1, unitPriceMicro: paid && plan.includedReplies === null ? prices.replyMicro : 0 }
      case 'call_minute':
        return { quantity: billedMinutes(act.seconds), unitPriceMicro: paid ? prices.voiceMinuteMicro[act.tier] : 0 }
      case 'analysis':
        return { quantity: 1, unitPriceMicro: paid ? prices.analysisPassMicro : 0 }
      case 'message':
        return { quantity: 1, unitPriceMicro: paid ? prices.messageMicro[act.category] : 0 }
      case 'reply_charge':
        return { quantity: 1, unitPriceMicro: paid ? replyChargeMicro(developer.currency, act.category) : 0 }
    }
  }

  async charge(input: ChargeInput): Promise<UsageRecordDoc | null> {
    const ws = await this.deps.workspaces.get(input.workspaceId)
    const developer = ws && (await this.payer(ws))
    if (!ws || !developer) return null
    const { quantity, unitPriceMicro } = this.price(developer, input.act)
    const detail = input.act.kind === 'call_minute' ? { seconds: input.act.seconds, tier: input.act.tier } : 'category' in input.act ? { category: input.act.category } : {}
    const { doc, fresh } = await this.deps.ledger.record({
      id: input.id,
      workspaceId: ws.id,
      developerId: developer.id,
      kind: input.act.kind as UsageKind,
      quantity,
      unitPriceMicro,
      costMicro: quantity * unitPriceMicro,
      currency: developer.currency,
      plan: developer.plan,
      ...detail,
      ...input.refs,
      createdAt: iso(input.at ?? this.deps.clock.now()),
    })
    if (fresh && doc.kind === 'reply') {
      const kept = this.replyCounts.get(developer.id)
      if (kept && doc.createdAt >= kept.month) kept.used++
    }
    if (fresh && doc.costMicro > 0) {
      // A charge dated into a closed month changes that month's sum: the wallet is computed afresh.
      const closedMonth = doc.createdAt < monthStart(this.deps.clock.now())
      if (closedMonth) await this.deps.wallet.forgetClosed(developer.id)
      await this.deps.wallet.afterSpend(developer, closedMonth ? undefined : doc.costMicro)
    }
    return doc
  }

  /** Replies counted against the allowance this UTC month: the whole account's (developer and customers). */
  async replyAllowance(workspace: WorkspaceDoc, opts: { exact?: boolean } = {}): Promise<ReplyAllowance> {
    const developer = await this.payer(workspace)
    if (!developer) return { used: 0, included: null, metered: true, stopped: true }
    const plan = PLANS[developer.plan]
    const used = await this.repliesUsed(developer.id, opts.exact === true)
    if (plan.includedReplies !== null) return { used, included: plan.includedReplies, metered: false, stopped: used >= plan.includedReplies }
    const wallet = await this.gateWallet(developer)
    return { used, included: null, metered: true, stopped: wallet.availableMicro < PRICES[developer.currency].replyMicro }
  }

  /** Replies this month: counted in the ledger, or (for the gate) a count at most GATE_COUNT_MS old. */
  private async repliesUsed(developerId: string, exact: boolean): Promise<number> {
    const now = this.deps.clock.now()
    const month = monthStart(now)
    const count = (from: string, to?: string) => this.deps.ledger.records.count({ developerId, kind: 'reply', createdAt: to === undefined ? { $gte: from } : { $gte: from, $lt: to } })
    if (exact) return count(month)
    let kept = this.replyCounts.get(developerId)
    if (kept && kept.month === month && now - kept.at < GATE_COUNT_MS) return kept.used
    if (!kept || kept.month !== month) kept = { month, settled: 0, until: month, at: now, used: 0 }
    const until = iso(Math.max(Date.parse(month), now - SETTLE_MS))
    if (until > kept.until) {
      kept.settled += await count(kept.until, until)
      kept.until = until
    }
    kept.used = kept.settled + (await count(kept.until))
    kept.at = now
    this.replyCounts.set(developerId, kept)
    return kept.used
  }

  /** Whether the account may still send a chat-app message this month (only Free caps them). */
  async messagesLeft(workspace: WorkspaceDoc | string): Promise<boolean> {
    const left = await this.messagesRemaining(workspace)
    return left === null || left > 0
  }

  /** How many chat-app messages the account may still send this month; null when its plan does not cap them. */
  async messagesRemaining(workspace: WorkspaceDoc | string): Promise<number | null> {
    const developer = await this.payer(workspace)
    if (!developer) return 0
    const included = PLANS[developer.plan].includedMessages
    if (included === null) return null
    const used = await this.deps.ledger.records.count({ developerId: developer.id, kind: 'message', createdAt: { $gte: monthStart(this.deps.clock.now()) } })
    return Math.max(0, included - used)
  }

  /**
   * Why the account cannot pay for one chat-app message of `category` now, or null when it can: on
   * a plan with a wallet, an available balance below the message's price (the gate's wallet, at
   * most GATE_WALLET_MS old). Free pays nothing: its monthly cap is messagesRemaining's.
   */
  async messageRefusal(workspace: WorkspaceDoc | string, category: MessageCategory): Promise<string | null> {
    const budget = await this.messageBudget(workspace, category)
    return budget && budget.availableMicro < budget.priceMicro ? cannotPayMessage(category, budget) : null
  }

  /** What the wallet has available (the gate's) and what one message of `category` costs; null on a plan without a wallet. */
  async messageBudget(workspace: WorkspaceDoc | string, category: MessageCategory): Promise<{ availableMicro: number; priceMicro: number } | null> {
    const developer = await this.payer(workspace)
    if (!developer || !PLANS[developer.plan].wallet) return null
    return { availableMicro: (await this.gateWallet(developer)).availableMicro, priceMicro: PRICES[developer.currency].messageMicro[category] }
  }

  /** Refuses a call (402) the account cannot pay a first minute of. */
  async checkCall(workspace: WorkspaceDoc, tier: VoiceTier): Promise<void> {
    const developer = await this.payer(workspace)
    if (!developer) return
    const plan = PLANS[developer.plan]
    if (plan.includedVoiceMinutes !== null) {
      const used = await this.deps.ledger.records.sum('quantity', { developerId: developer.id, kind: 'call_minute', createdAt: { $gte: monthStart(this.deps.clock.now()) } })
      if (used >= plan.includedVoiceMinutes) {
        throw notCovered(`the ${developer.plan} plan's ${plan.includedVoiceMinutes} voice minutes for this month are used up (${used} used); calls resume on the 1st (UTC) or after an upgrade`, {
          minutesUsed: used,
        })
      }
      return
    }
    const price = PRICES[developer.currency].voiceMinuteMicro[tier]
    const wallet = await this.gateWallet(developer)
    if (wallet.availableMicro < price) {
      throw notCovered(`the balance cannot cover a call: ${wallet.availableMicro} micro-units available, a ${tier} voice minute costs ${price}; top up the wallet`, {
        availableMicro: wallet.availableMicro,
        minuteMicro: price,
      })
    }
  }

  /** What a workspace's usage cost its developer since the 1st (UTC), rent fallen due included. */
  async spendThisMonth(workspace: WorkspaceDoc): Promise<number> {
    const developer = await this.payer(workspace)
    if (developer) await this.settledWallet(developer)
    return this.deps.ledger.spendSince(workspace.id, monthStart(this.deps.clock.now()))
  }

  /** For a gate: a wallet at most GATE_WALLET_MS old (wallet.ts), else a settled one. */
  private async gateWallet(developer: WorkspaceDoc) {
    return this.deps.wallet.recent(developer.id) ?? this.settledWallet(developer)
  }

  /** The wallet after any rent that fell due is charged. */
  async settledWallet(developer: WorkspaceDoc) {
    if (!PLANS[developer.plan].wallet) return this.deps.wallet.compute(developer)
    const settled = await this.deps.rent.settle(developer)
    if (settled.earliest !== null && settled.earliest < monthStart(this.deps.clock.now())) await this.deps.wallet.forgetClosed(developer.id)
    if (settled.written > 0) await this.deps.wallet.afterSpend(developer)
    return this.deps.wallet.remember(developer.id, await this.deps.wallet.compute(developer, settled.heldMicro))
  }
}
