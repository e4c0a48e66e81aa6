/**
 * Synthesised audio of the lines an agent says the same way on every call — the greeting, the
 * purpose a campaign repeats, the goodbyes — kept per engine, voice, language and text, so they
 * play at once instead of waiting for text-to-speech. Least recently used first out past
 * MAX_BYTES: 32 MB is ~17 minutes of 16 kHz audio, thousands of greetings, a small share of
 * the memory a process carrying hundreds of calls has (bench:voice: ~2 MB a call).
 */
export const MAX_BYTES = 32 * 1024 * 1024

export class PhraseCache {
  private readonly entries = new Map<string, Int16Array[]>()
  private bytes = 0

  get(key: string): Int16Array[] | null {
    const audio = this.entries.get(key)
    if (!audio) return null
    // Used again: to the back of the line.
    this.entries.delete(key)
    this.entries.set(key, audio)
    return audio
  }

  put(key: string, audio: Int16Array[]): void {
    const size = audio.reduce((n, a) => n + a.byteLength, 0)
    if (size === 0 || size > MAX_BYTES || this.entries.has(key)) return
    this.entries.set(key, audio)
    this.bytes += size
    for (const [oldest, a] of this.entries) {
      if (this.bytes <= MAX_BYTES) break
      this.entries.delete(oldest)
      this.bytes -= a.reduce((n, x) => n + x.byteLength, 0)
    }
  }

  get size(): number {
    return this.entries.size
  }
}
