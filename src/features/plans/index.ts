/** What other features may use of plans (its only public surface). */

// Re-exported for other features (they import from this index, never from inner files).
export { PLANS, PLAN_IDS, planIncludes, type PlanId } from './catalogue'
