/**
 * The agent's audio as it plays at the sandbox callee, in real time as a phone plays it: what is
 * buffered, and each `mark`, echoed once the audio sent before it has played (at once on `clear`,
 * which drops the buffered audio, as Twilio does).
 */
export class AgentPlayback {
  /** Agent audio waiting to play (samples). */
  buffered = 0
  /** Marks in order, each due after so many more samples have played. */
  private marks: { name: string; after: number }[] = []

  /** Agent audio arrived: `samples` more to play. */
  add(samples: number): void {
    this.buffered += samples
  }

  /** A mark arrived: the marks to echo now (it, when nothing is left to play before it). */
  mark(name: string): string[] {
    if (this.buffered === 0) return [name]
    this.marks.push({ name, after: this.buffered })
    return []
  }

  /** Up to `samples` of the buffered audio play: how many did, and the marks now due. */
  play(samples: number): { played: number; due: string[] } {
    const played = Math.min(this.buffered, samples)
    this.buffered -= played
    for (const m of this.marks) m.after = Math.max(0, m.after - played)
    const due: string[] = []
    while (this.marks.length && this.marks[0]!.after === 0) due.push(this.marks.shift()!.name)
    return { played, due }
  }

  /** `clear`: the buffered audio is dropped; every pending mark is due at once. */
  clear(): string[] {
    this.buffered = 0
    return this.marks.splice(0).map((m) => m.name)
  }
}
