/** What other features may use of plans (its only public surface). */

// Re-exported for other features (they import from this index, never from inner files).
export { LOW_BALANCE_THRESHOLDS, PLANS, PLAN_IDS, RENT_HOLD_DAYS, planIncludes, type Plan, type PlanId } from './catalogue'
export { PRICES, REPLY_CHARGE_SHARE, billedMinutes, replyChargeMicro, type Currency, type MessageCategory, type PriceList, type TemplateCategory, type VoiceTier } from './prices'
export { V1_RATES, V1_RATE_WINDOW_MS, v1RateRule, type V1Rates } from './rates'
