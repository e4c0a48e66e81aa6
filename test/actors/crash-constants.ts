/** Numbers the crash test and its child process agree on. */

// Deliberately small so the first claimed batch (the one held un-acked) is a part of all timers.
export const HOLD_BATCH = 50
// Held claims must come back quickly in the next phase; one second is plenty for a local
// delivery and keeps the test short.
export const CLAIM_LEASE_MS = 1_000
