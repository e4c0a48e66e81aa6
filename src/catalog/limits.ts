/**
 * The per-plan ceilings, in one table each: v1 requests per API key and minute, and calls placed
 * per minute and held at once.
 *
 * v1 requests (docs/spec.md Limits: "Which of these rate limits applies to v1 endpoints: not shown";
 * the Errors table names 429 for conversation reads and replies). Sizing: pay-as-you-go reads at
 * SPEC's legacy "API endpoints" figure (120 a minute), enough for the catch-up loop SPEC
 * recommends every few minutes over many conversations; replies at half of that, one reply a
 * second, faster than any person types and well under the chat-app platform's per-number
 * throughput. Free halves them; higher plans grow about 2.5x a step with their volume.
 */
import type { PlanId } from './plans'

/** A ceiling counted in fixed windows (http/rate-limit.ts counts it in the coordination store). */
export interface RateRule {
  /** Names the bucket, e.g. `api`, `chat`, `knowledge-upload`. */
  name: string
  limit: number
  windowMs: number
}

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

/**
 * How many calls a workspace may place a minute and hold at once (docs/spec.md Limits: "Numeric
 * ceilings for calls per minute and for concurrent calls: not shown" — ours, per plan, in the
 * API notes, docs/api/calls.md). Concurrency counts the developer's call lines, shared with its customers
 * (a customer's `allottedCallLines` caps its own share), and inbound calls count too (docs/spec.md
 * Call-placing rules).
 *
 * Sizing: the free plan is for trying the product (two lines); pay-as-you-go matches the ten
 * concurrent lines hosted peers give by default; higher plans grow by about 5x a step, and
 * enterprise carries a 1,000-call burst (bench:calls places 1,000 calls through the API).
 */
export interface CallCeilings {
  /** Calls placed through the API per minute (a fixed window). */
  perMinute: number
  /** Calls ringing or connected at once, inbound included. */
  lines: number
  /**
   * How long a call may last when its agent's `voice.maxCallSeconds` is null (docs/spec.md: "or `null` for
   * the plan default"; the numbers are ours, within docs/spec.md's 60–1,200). Free: 5 minutes, a sixth of
   * its 30 included minutes, so one stuck call cannot use them up; pay-as-you-go and Pro: 10 minutes,
   * long enough for any support or sales call; Scale 15 and Enterprise 20 (the ceiling) for
   * the longer calls those accounts run (collections, intake).
   */
  defaultCallSeconds: number
}

export const CALL_CEILINGS: Record<PlanId, CallCeilings> = {
  free: { perMinute: 10, lines: 2, defaultCallSeconds: 300 },
  payg: { perMinute: 60, lines: 10, defaultCallSeconds: 600 },
  pro: { perMinute: 300, lines: 50, defaultCallSeconds: 600 },
  scale: { perMinute: 1_200, lines: 200, defaultCallSeconds: 900 },
  enterprise: { perMinute: 6_000, lines: 1_000, defaultCallSeconds: 1_200 },
}

/** The rate window: "calls a minute" (docs/spec.md Errors for POST calls). */
export const RATE_WINDOW_MS = 60_000
