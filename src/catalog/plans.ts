/**
 * Plans and what they allow. Customer limits are docs/spec.md's Limits table; the agent allowance,
 * reply allowances, plan credit and low-balance thresholds are "not shown" there, so the numbers
 * below are our choice (docs/api/billing.md).
 *
 * src/catalog/ holds the product's catalogues (plans, prices, per-plan limits, models, voices) as
 * data: every feature and the kernel read them, and they import no feature, so reading a price
 * pulls in nothing else. Plans were a folder of features/ with no routes or state of their own.
 */
import type { Currency } from './prices'

export const PLAN_IDS = ['free', 'payg', 'pro', 'scale', 'enterprise'] as const
export type PlanId = (typeof PLAN_IDS)[number]

export interface Plan {
  id: PlanId
  /** Customers a developer workspace may hold, deleted ones counted until erased (docs/spec.md Limits). */
  customers: number
  /** Agents per workspace (our choice: docs/spec.md leaves it to us). */
  agents: number
  /** Position in the upgrade path; a model with `minPlan` p is available from rank(p) up. */
  rank: number
  /**
   * Agent replies included per UTC month, shared by the developer and all its customers; null:
   * metered (each reply is paid from the wallet at the price list's rate).
   */
  includedReplies: number | null
  /** Voice minutes included per UTC month (Free only: the other plans pay minutes from the wallet). */
  includedVoiceMinutes: number | null
  /** Chat-app messages the service sends (sequences, broadcasts) included per UTC month (Free only; the others pay each from the wallet). */
  includedMessages: number | null
  /** Whether the plan has a wallet (docs/spec.md: `wallet` is null on the Free plan). */
  wallet: boolean
  /** Credit included with the plan each UTC month, spent before the topped-up balance; what is left expires at the month's end. */
  creditMicro: Record<Currency, number>
}

/**
 * Sizing: Free is for trying the product (a few days of a small site's chat, half an hour of
 * calls); Pay as you go meters every reply and comes with a small monthly credit so a new account
 * can test before topping up; Pro, Scale and Enterprise include replies (each step about 10x) and
 * a monthly credit worth roughly a tenth of the plan's fee for calls, analysis and messages.
 */
export const PLANS: Record<PlanId, Plan> = {
  free: { id: 'free', customers: 3, agents: 1, rank: 0, includedReplies: 100, includedVoiceMinutes: 30, includedMessages: 100, wallet: false, creditMicro: { USD: 0, INR: 0 } },
  payg: { id: 'payg', customers: 3, agents: 10, rank: 1, includedReplies: null, includedVoiceMinutes: null, includedMessages: null, wallet: true, creditMicro: { USD: 5_000_000, INR: 400_000_000 } },
  pro: {
    id: 'pro',
    customers: 100,
    agents: 50,
    rank: 2,
    includedReplies: 5_000,
    includedVoiceMinutes: null,
    includedMessages: null,
    wallet: true,
    creditMicro: { USD: 20_000_000, INR: 1_500_000_000 },
  },
  scale: {
    id: 'scale',
    customers: 1000,
    agents: 200,
    rank: 3,
    includedReplies: 50_000,
    includedVoiceMinutes: null,
    includedMessages: null,
    wallet: true,
    creditMicro: { USD: 100_000_000, INR: 8_000_000_000 },
  },
  enterprise: {
    id: 'enterprise',
    customers: 10000,
    agents: 1000,
    rank: 4,
    includedReplies: 500_000,
    includedVoiceMinutes: null,
    includedMessages: null,
    wallet: true,
    creditMicro: { USD: 500_000_000, INR: 40_000_000_000 },
  },
}

export const planIncludes = (plan: PlanId, minPlan: PlanId): boolean => PLANS[plan].rank >= PLANS[minPlan].rank

/**
 * Low-balance notification thresholds on `availableMicro`, highest first: a developer hears once
 * when the balance falls below each (about a week, then about a day, of a small account's spend),
 * and again only after a top-up lifted it above. Zero marks "the wallet is empty".
 */
export const LOW_BALANCE_THRESHOLDS: Record<Currency, number[]> = {
  USD: [10_000_000, 2_000_000, 0],
  INR: [800_000_000, 150_000_000, 0],
}

/** Money is held for a rented number's next month of rent from this long before it renews. */
export const RENT_HOLD_DAYS = 7
