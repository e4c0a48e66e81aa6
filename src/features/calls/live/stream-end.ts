/**
 * How a live media stream ends: once, whoever asks first (the agent hangs up, the caller stops,
 * a hang-up decided on another instance, a lost socket); a later ask finds it ending already.
 *
 * The voice pipeline is built with `end` as its hang-up, before the wrap-up exists: the wrap-up
 * closes that pipeline, so it is named with `wrapUpWith` once the stream's parts are there. An end
 * asked before that is kept and runs as soon as the wrap-up is named.
 */

/** How a media stream's call ends (the call chart's `call.ended` hangup). */
export type EndedBy = 'answered' | 'failed' | 'voicemail'
export type WrapUp = (hangup: EndedBy, error?: string) => Promise<void>

export class StreamEnd {
  private how: { hangup: EndedBy; error?: string } | null = null
  private wrapUp: WrapUp | null = null
  private started = false

  /** `running` hears the wrap-up's work when it starts (a shutdown waits for it). */
  constructor(private readonly running: (work: Promise<void>) => void) {}

  /** Ends the stream; resolves when the wrap-up has run (at once for a repeat, or before the wrap-up is named). */
  end(hangup: EndedBy, error?: string): Promise<void> {
    if (this.how) return Promise.resolve()
    this.how = error === undefined ? { hangup } : { hangup, error }
    return this.run()
  }

  /** Whether the end was asked (the stream is over, or its wrap-up waits to be named). */
  get asked(): boolean {
    return this.how !== null
  }

  /** Names what ending does; runs it now if the end was asked already. */
  wrapUpWith(wrapUp: WrapUp): Promise<void> {
    this.wrapUp = wrapUp
    return this.run()
  }

  private run(): Promise<void> {
    if (!this.how || !this.wrapUp || this.started) return Promise.resolve()
    this.started = true
    const work = this.wrapUp(this.how.hangup, this.how.error)
    this.running(work)
    return work
  }
}
