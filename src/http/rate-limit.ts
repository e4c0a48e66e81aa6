/**
 * Fixed-window rate limits in the coordination store (so every instance counts together), with
 * docs/spec.md's `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds)
 * on the answer and `Retry-After` on a 429.
 */

import type { RateRule } from '../catalog/limits'
import type { Coordination, RateHit } from '../coordination/port'
import { Refused } from '../refusals'

/** docs/spec.md Limits, "Rate limits (legacy surface)". */
export const LEGACY_RATES = {
  chat: { name: 'chat', limit: 60, windowMs: 60_000 },
  api: { name: 'api', limit: 120, windowMs: 60_000 },
  knowledgeUpload: { name: 'knowledge-upload', limit: 10, windowMs: 3_600_000 },
} as const satisfies Record<string, RateRule>

/**
 * Counts one request of `subject` against `rule`, writes the headers into `headers`, and throws
 * 429 when the window is used up.
 */
export async function countRequest(coordination: Coordination, rule: RateRule, subject: string, now: number, headers: Record<string, unknown>): Promise<void> {
  const hit = await coordination.rateHit(`rate:${rule.name}:${subject}`, rule.limit, rule.windowMs, now)
  Object.assign(headers, rateHeaders(hit))
  if (!hit.allowed) throw rateLimited(hit, now, (retryAfter) => `rate limit exceeded: ${rule.limit} requests per ${rule.windowMs / 1000} s; retry in ${retryAfter} s`)
}

/** The `X-RateLimit-*` headers of a hit. */
export function rateHeaders(hit: RateHit): Record<string, string> {
  return {
    'x-ratelimit-limit': String(hit.limit),
    'x-ratelimit-remaining': String(hit.remaining),
    'x-ratelimit-reset': String(Math.ceil(hit.resetAt / 1000)),
  }
}

/** The 429 for a refused hit: its `X-RateLimit-*` headers and `Retry-After` (whole seconds, at least 1). */
export function rateLimited(hit: RateHit, now: number, message: (retryAfter: number) => string, extra?: (retryAfter: number) => Record<string, unknown>): Refused {
  const retryAfter = Math.max(1, Math.ceil((hit.resetAt - now) / 1000))
  return new Refused('too_many', message(retryAfter), extra?.(retryAfter), retryAfter, rateHeaders(hit))
}
