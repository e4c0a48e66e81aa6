/**
 * The audio of one utterance, for request/response transcribers (OpenAI-compatible, pocketsphinx):
 * kept as it arrives, bounded (the oldest audio goes past the bound), and taken whole when the
 * pipeline's endpointing ends the utterance.
 */
export class UtteranceBuffer {
  private chunks: Int16Array[] = []
  private samples = 0

  constructor(private readonly maxSamples: number) {}

  push(pcm: Int16Array): void {
    this.chunks.push(pcm)
    this.samples += pcm.length
    while (this.samples > this.maxSamples && this.chunks.length > 1) this.samples -= this.chunks.shift()!.length
  }

  /** The utterance so far as one array, and the buffer empties for the next one. */
  take(): Int16Array {
    const out = new Int16Array(this.samples)
    let at = 0
    for (const c of this.chunks) {
      out.set(c, at)
      at += c.length
    }
    this.clear()
    return out
  }

  clear(): void {
    this.chunks = []
    this.samples = 0
  }
}
