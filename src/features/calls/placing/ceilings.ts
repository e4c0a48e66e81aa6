/** How long a call line is held, and when to try again when every line is busy (the per-plan ceilings are in src/catalog/limits.ts). */

/**
 * A line is held from placement until the call ends; one nobody released (a crashed instance)
 * lapses after the longest call there can be — maxCallSeconds' ceiling of 1,200 s (docs/spec.md Limits)
 * plus two minutes of ringing — so a crash costs a line for at most 22 minutes.
 */
export const LINE_TTL_MS = (1_200 + 120) * 1_000

/** Retry-After when every line is busy: calls last minutes, so a short pause is a fair next try. */
export const LINES_BUSY_RETRY_SECONDS = 30
