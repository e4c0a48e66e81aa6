/**
 * v1 request ceilings per plan, per API key and minute (SPEC.md Limits: "Which of these rate
 * limits applies to v1 endpoints: not shown"; the Errors table names 429 for conversation reads
 * and replies). Calls per minute and concurrent calls are the calls feature's (calls/ceilings.ts).
 *
 * Sizing: pay-as-you-go reads at SPEC's legacy "API endpoints" figure (120 a minute), enough for
 * the catch-up loop SPEC recommends every few minutes over many conversations; replies at half of
 * that, one reply a second, faster than any person types and well under the chat-app platform's
 * per-number throughput. Free halves them; higher plans grow about 2.5x a step with their volume.
 */
import type { RateRule } from '../../http/rate-limit'
import type { PlanId } from './catalogue'

export interface V1Rates {
  /** GET /conversations and GET /conversations/{id}/messages together, per key per minute. */
  conversationReads: number
  /** POST /conversations/{id}/reply, per key per minute. */
  replies: number
}

export const V1_RATES: Record<PlanId, V1Rates> = {
  free: { conversationReads: 60, replies: 30 },
  payg: { conversationReads: 120, replies: 60 },
  pro: { conversationReads: 300, replies: 150 },
  scale: { conversationReads: 600, replies: 300 },
  enterprise: { conversationReads: 1_200, replies: 600 },
}

/** The window every v1 ceiling counts in. */
export const V1_RATE_WINDOW_MS = 60_000

/** One v1 ceiling of a plan as a rule for http/rate-limit's countRequest (counted per key); `name` keys its counters. */
export const v1RateRule = (name: string, ceiling: keyof V1Rates, plan: PlanId): RateRule => ({ name, limit: V1_RATES[plan][ceiling], windowMs: V1_RATE_WINDOW_MS })
