/**
 * How many calls a workspace may place a minute and hold at once (SPEC.md Limits: "Numeric
 * ceilings for calls per minute and for concurrent calls: not shown" — ours, per plan, in the
 * README's API notes). Concurrency counts the developer's call lines, shared with its customers
 * (a customer's `allottedCallLines` caps its own share), and inbound calls count too (SPEC.md
 * Call-placing rules).
 *
 * Sizing: the free plan is for trying the product (two lines); pay-as-you-go matches the ten
 * concurrent lines hosted peers give by default; higher plans grow by about 5x a step, and
 * enterprise carries a 1,000-call burst (bench:calls places 1,000 calls through the API).
 */
import type { PlanId } from '../plans'

export interface CallCeilings {
  /** Calls placed through the API per minute (a fixed window). */
  perMinute: number
  /** Calls ringing or connected at once, inbound included. */
  lines: number
  /**
   * How long a call may last when its agent's `voice.maxCallSeconds` is null (SPEC.md: "or `null` for
   * the plan default"; the numbers are ours, within SPEC.md's 60–1,200). Free: 5 minutes, a sixth of
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

/** The rate window: "calls a minute" (SPEC.md Errors for POST calls). */
export const RATE_WINDOW_MS = 60_000

/**
 * A line is held from placement until the call ends; one nobody released (a crashed instance)
 * lapses after the longest call there can be — maxCallSeconds' ceiling of 1,200 s (SPEC.md Limits)
 * plus two minutes of ringing — so a crash costs a line for at most 22 minutes.
 */
export const LINE_TTL_MS = (1_200 + 120) * 1_000

/** Retry-After when every line is busy: calls last minutes, so a short pause is a fair next try. */
export const LINES_BUSY_RETRY_SECONDS = 30
