/**
 * This caller's pauses inside their turns, for dynamic endpointing (as LiveKit's agents do): a
 * caller who pauses long between the groups of a phone number gets a longer wait the next time
 * their voice says they are not done, and one who pauses briefly a shorter one.
 */

/** A silence shorter than this inside speech is a stop consonant or the VAD's flicker, not a pause (Goldman-Eisler's 250 ms, a little under). */
export const MIN_PAUSE_MS = 200
/** A silence this long or longer ended a turn or let the agent speak: not a pause inside a turn (the longest end-of-turn wait, TRAILING_WAIT_MS). */
export const MAX_PAUSE_MS = 1_500
/** How many of the caller's most recent pauses speak for them: a call's last minute or so. */
const KEPT = 12

export class PauseHistory {
  private readonly pauses: number[] = []

  /** A silence of `ms` between two stretches of the caller's speech; kept when it is a pause inside a turn. */
  gap(ms: number): void {
    if (ms < MIN_PAUSE_MS || ms >= MAX_PAUSE_MS) return
    this.pauses.push(Math.round(ms))
    if (this.pauses.length > KEPT) this.pauses.shift()
  }

  /** The kept pauses, oldest first. */
  get recent(): readonly number[] {
    return this.pauses
  }
}

/** Pauses of this caller seen before their wait is theirs: the first already says how long they pause (a stray one only makes the wait longer, up to the cap). */
export const MIN_PAUSES = 1
/** Beyond the caller's longest recent pause, the wait leaves this much (the VAD's end-of-speech jitter and the caller's own variation). */
export const PAUSE_MARGIN_MS = 250

/**
 * The wait for a caller whose voice says they go on: their longest recent pause plus a margin,
 * kept within [floorMs, upperMs]; `fallbackMs` until they have paused MIN_PAUSES times.
 */
export function holdingWait(pauses: readonly number[], fallbackMs: number, floorMs: number, upperMs: number): number {
  if (pauses.length < MIN_PAUSES) return Math.min(fallbackMs, upperMs)
  return Math.min(upperMs, Math.max(floorMs, Math.max(...pauses) + PAUSE_MARGIN_MS))
}
