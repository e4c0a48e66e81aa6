/** Sentences waiting for TTS, in order: pushed as the model writes them, consumed by one speaker. */
export class SpeechQueue implements AsyncIterable<string> {
  private readonly items: string[] = []
  private closed = false
  private wake: (() => void) | null = null
  count = 0

  /** `pushed` hears each sentence as it is queued (what the agent means to say, heard or not). */
  constructor(private readonly pushed?: (sentence: string) => void) {}

  push(sentence: string): void {
    if (this.closed) return
    this.pushed?.(sentence)
    this.items.push(sentence)
    this.count++
    this.wake?.()
  }

  close(): void {
    this.closed = true
    this.wake?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.items.shift()
      if (next !== undefined) {
        yield next
        continue
      }
      if (this.closed) return
      await new Promise<void>((resolve) => (this.wake = resolve))
      this.wake = null
    }
  }
}
