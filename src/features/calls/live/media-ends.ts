/**
 * The end of a try's media stream as something to wait for: analysis reads the transcript only
 * once the stream has written its last line, its recording and `media: 'done'`. The stream (on
 * whichever instance holds its socket) announces the end on a channel every instance hears; a
 * wait also ends at its deadline on the service clock, since a stream whose instance died never
 * announces.
 */
import type { Clock } from '../../../clock'
import type { Coordination } from '../../../coordination/port'
import type { CallTryDoc, CallTryRepo } from '../records/repository'

/**
 * How long analysis waits for the media stream after the call ended: the pipeline finishes in
 * milliseconds; 5 s covers a slow store, and a stream that never reports does not hold the
 * analysis for longer.
 */
export const MEDIA_SETTLE_MS = 5_000

const ENDED_CHANNEL = 'call-media-ended'

export class MediaEnds {
  /** Who waits in this process, by try id. */
  private readonly waiting = new Map<string, Set<() => void>>()
  /** Deadlines under the manual clock: passed by clockMoved. */
  private readonly deadlines = new Set<{ at: number; pass: () => void }>()
  private unsubscribe: (() => Promise<void>) | null = null

  constructor(private readonly deps: { tries: CallTryRepo; coordination: Coordination; clock: Clock }) {}

  async start(): Promise<void> {
    this.unsubscribe ??= await this.deps.coordination.subscribe(ENDED_CHANNEL, (tryId) => this.wake(tryId))
  }

  async stop(): Promise<void> {
    const off = this.unsubscribe
    this.unsubscribe = null
    if (off) await off()
  }

  /** The try's stream has written its last: whoever waits for it, here or on another instance, reads on. */
  async ended(tryId: string): Promise<void> {
    this.wake(tryId)
    await this.deps.coordination.publish(ENDED_CHANNEL, tryId)
  }

  /** The manual clock moved to `now`: waits whose deadline it reached end. */
  clockMoved(now: number): void {
    for (const d of this.deadlines) if (d.at <= now) d.pass()
  }

  /** The try's row once its stream is no longer live, or as it stands at the deadline (MEDIA_SETTLE_MS). */
  async settled(tryId: string): Promise<CallTryDoc | null> {
    const { tries, clock } = this.deps
    const row = await tries.get(tryId)
    if (row?.media !== 'live') return row
    // Listening before the second read: an end announced between the two is not missed.
    const wait = this.wait(tryId, clock.now() + MEDIA_SETTLE_MS)
    try {
      const again = await tries.get(tryId)
      if (again?.media !== 'live') return again
      await wait.passed
      return await tries.get(tryId)
    } finally {
      wait.cancel()
    }
  }

  private wake(tryId: string): void {
    for (const pass of this.waiting.get(tryId) ?? []) pass()
  }

  private wait(tryId: string, deadline: number): { passed: Promise<void>; cancel(): void } {
    let pass!: () => void
    const passed = new Promise<void>((resolve) => (pass = resolve))
    const here = this.waiting.get(tryId) ?? new Set()
    here.add(pass)
    this.waiting.set(tryId, here)
    const { clock } = this.deps
    const entry = { at: deadline, pass }
    // Not clock.after: on the manual clock the deadline is passed by clockMoved, once the clock hooks run.
    const timer = clock.kind === 'system' ? setTimeout(pass, Math.max(0, deadline - clock.now())) : null
    if (!timer) this.deadlines.add(entry)
    return {
      passed,
      cancel: () => {
        if (timer) clearTimeout(timer)
        this.deadlines.delete(entry)
        const set = this.waiting.get(tryId)
        set?.delete(pass)
        if (set?.size === 0) this.waiting.delete(tryId)
      },
    }
  }
}
