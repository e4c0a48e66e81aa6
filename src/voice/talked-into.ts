/**
 * Pauses the agent talked into: the caller speaks again within TALKED_INTO_MS of the first audio of
 * the agent's answer — they had only paused, and the end-of-turn rule took the pause for the end of
 * their turn. Counted per call from the turn chart's states and the caller's speech starts, both on
 * the session's clock; what the agent does about that speech (stop, resume) is counted in `overlaps`.
 */
import type { PipelineState } from './call-line'

/**
 * A caller still mid-thought goes on within about a second of the answer's start: a second is
 * past the 200–500 ms of a turn's ordinary gap and reaction (Stivers et al. 2009, turn-taking
 * across languages), so a caller who speaks this soon was not answering what the agent said.
 */
export const TALKED_INTO_MS = 1_000

export class TalkedInto {
  count = 0
  private answerAt: number | null = null
  private last: PipelineState | '' = ''

  /** `counted` hears the call's count each time it grows. */
  constructor(private readonly counted: (count: number) => void) {}

  /** The chart's turn state, as each snapshot has it; `now` on the session's clock. */
  state(state: PipelineState, now: number): void {
    if (state === this.last) return
    // Only an answer's first audio starts the window: a resumed sentence continues one.
    this.answerAt = this.last === 'thinking' && state === 'speaking' ? now : state === 'speaking' ? this.answerAt : null
    this.last = state
  }

  /** The caller's speech started (before the chart hears it): true when it counts as a pause talked into. */
  speech(now: number): boolean {
    if (this.answerAt === null || now - this.answerAt > TALKED_INTO_MS) return false
    this.answerAt = null
    this.count += 1
    this.counted(this.count)
    return true
  }
}
