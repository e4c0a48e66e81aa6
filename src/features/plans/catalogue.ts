/**
 * Plans and what they allow. Customer limits are SPEC.md's Limits table; the agent allowance is
 * "not shown" there, so the numbers below are our choice (README, API notes).
 */
export const PLAN_IDS = ['free', 'payg', 'pro', 'scale', 'enterprise'] as const
export type PlanId = (typeof PLAN_IDS)[number]

export interface Plan {
  id: PlanId
  /** Customers a developer workspace may hold, deleted ones counted until erased (SPEC.md Limits). */
  customers: number
  /** Agents per workspace (our choice: SPEC.md leaves it to us). */
  agents: number
  /** Position in the upgrade path; a model with `minPlan` p is available from rank(p) up. */
  rank: number
}

export const PLANS: Record<PlanId, Plan> = {
  free: { id: 'free', customers: 3, agents: 1, rank: 0 },
  payg: { id: 'payg', customers: 3, agents: 10, rank: 1 },
  pro: { id: 'pro', customers: 100, agents: 50, rank: 2 },
  scale: { id: 'scale', customers: 1000, agents: 200, rank: 3 },
  enterprise: { id: 'enterprise', customers: 10000, agents: 1000, rank: 4 },
}

export const planIncludes = (plan: PlanId, minPlan: PlanId): boolean => PLANS[plan].rank >= PLANS[minPlan].rank
