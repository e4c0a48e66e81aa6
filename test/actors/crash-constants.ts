/** Numbers the crash test and its child process agree on. */

// Deliberately small so the first claimed batch (the one held un-acked) is a part of all timers.
export const HOLD_BATCH = 50
// Held claims must come back quickly in the next phase; one second is plenty for a local
// delivery and keeps the test short.
export const CLAIM_LEASE_MS = 1_000

// The spawn phase runs on the system clock and arms every deadline this far ahead, so no timer can
// fall due while it runs, however slowly; the later phases run on a clock twice as far ahead, where
// every one of them is due. No phase has to beat the real clock.
export const DEADLINE_AHEAD_MS = 60 * 60 * 1000
export const LATER_CLOCK_AHEAD_MS = 2 * DEADLINE_AHEAD_MS
