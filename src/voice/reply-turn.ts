/**
 * One reply of the agent (or a fixed line it says): its cancellation, its latency marks, and its
 * release gate. A reply started early on what the caller said so far (preemptive generation) is
 * held: its text streams and its first sentence is synthesised, but none of it reaches the line,
 * the transcript or the conversation until the turn is over and the final transcript matches
 * (`release()`); a cancelled one (`cancel()`) leaves nothing behind.
 */
import type { TurnLatency } from './latency'

export interface AgentReply {
  reply: string
  endCall: boolean
  /** A transfer the agent asked for (its destination's name): the caller is put through once the reply has played. */
  transfer?: string | null
  /** Keys the agent presses once the reply has played (send_digits): tones into the line. */
  digits?: string | null
  /** The stored reply, revised to what the caller heard when they interrupted. */
  messageId: string | null
}

export class ReplyTurn {
  readonly controller = new AbortController()
  /** Marks of a reply to the caller; null for fixed lines (the opening, a goodbye). */
  latency: TurnLatency | null = null
  reply: AgentReply | null = null
  endAfter = false
  /** The sentences (clauses) written for speech so far, in order: a cut turn resumes from these. */
  readonly written: string[] = []
  /** When the model's first text and the first synthesised audio arrived (kept from before release too). */
  firstTokenAt: number | null = null
  ttsFirstByteAt: number | null = null
  private open!: () => void
  /** Resolves once the turn may be heard and written. */
  readonly released: Promise<void>
  private isReleased = false
  private ready!: () => void
  /**
   * Resolves once the turn has something for the line (its first clause synthesised), or has
   * nothing to say after all: an answer is released only then, so until that moment the caller
   * may go on and the answer is withdrawn with no trace.
   */
  readonly audible: Promise<void>

  constructor(
    readonly id: number,
    /** What the caller said that this replies to ('' for fixed lines). */
    readonly text: string,
    held: boolean,
  ) {
    this.released = new Promise<void>((resolve) => (this.open = resolve))
    this.audible = new Promise<void>((resolve) => (this.ready = resolve))
    if (!held) this.release()
  }

  /** Its first audio is ready, or it will have none. */
  markAudible(): void {
    this.ready()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  get held(): boolean {
    return !this.isReleased
  }

  release(): void {
    this.isReleased = true
    this.open()
  }

  cancel(): void {
    this.controller.abort(new DOMException('the reply was cancelled', 'AbortError'))
  }

  /** Until released, or never once cancelled (resolves false then). */
  async whenReleased(): Promise<boolean> {
    if (this.signal.aborted) return false
    return Promise.race([this.released.then(() => !this.signal.aborted), new Promise<boolean>((resolve) => this.signal.addEventListener('abort', () => resolve(false), { once: true }))])
  }
}

/** The same words, whatever the engine's case, punctuation or spacing: an early reply stands. */
export const sameWords = (a: string, b: string): boolean => norm(a) === norm(b)
const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s']/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
