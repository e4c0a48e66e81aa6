/**
 * The visitor API's rate limits (the widget's routes are public, so every limit is ours), counted
 * in the coordination store on the service clock (every instance counts together; tests advance
 * the manual clock). Each answer carries X-RateLimit-* and a 429 Retry-After (http/rate-limit.ts).
 */
import type { RateRule } from '../../catalog/limits'

export const WEB_RATES = {
  /**
   * Messages per visitor: 10 per 10 s. A person reads a reply and types the next line in a few
   * seconds; a burst of 10 leaves room for several short lines sent in a row (or pasted), and a
   * script flooding one session is stopped within 10 s.
   */
  visitorMessages: { name: 'web-visitor', limit: 10, windowMs: 10_000 },
  /**
   * Messages per widget key: 3,000 a minute (50/s) — a busy site with 3,000 visitors each writing
   * once a minute; past it one site's traffic (or abuse) would crowd out others on the instance.
   */
  keyMessages: { name: 'web-key', limit: 3_000, windowMs: 60_000 },
  /** New sessions per widget key: 1,000 a minute, so a script cannot mint visitors to dodge the per-visitor limit. */
  keySessions: { name: 'web-sessions', limit: 1_000, windowMs: 60_000 },
} as const satisfies Record<string, RateRule>

/** New sessions per client address and widget key, a minute (VISITOR_SESSIONS_PER_MINUTE, src/config.ts says why 30). */
export const addressSessions = (limit: number): RateRule => ({ name: 'web-address-sessions', limit, windowMs: 60_000 })

/** docs/spec.md Limits: a chat message is at most 4,000 characters (the test chat limit; website chat is the same chat). */
export const WEB_MESSAGE_MAX = 4_000
/** Messages handed back when a session resumes: the widget shows the latest of the conversation. */
export const RESUME_MESSAGES = 50
