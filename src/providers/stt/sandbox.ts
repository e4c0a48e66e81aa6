/**
 * The sandbox network's speech-to-text: its test double, never used for real calls. The sandbox
 * callee says which scripted line it is speaking (`said`), and the utterance that follows is
 * "transcribed" as exactly that line, so end-to-end tests are deterministic; while its audio
 * arrives it streams the line's words as partial results, in step with the audio, as a live engine would. Audio that arrives
 * with no line said (noise, a cough) transcribes as '' — the pipeline's false-interruption case.
 *
 * "In step with the audio" is counted in the caller's stream when the callee says where its line
 * starts in it (`at`): a word shows once its share of the line's audio has been pushed here, so a
 * host that falls behind hears the same words at the same place in the audio. A line said without
 * `at` is followed by the process's time since it was said.
 *
 * The script lives in this process: the callee connects to the instance that runs it, so its
 * media socket and this registry meet in one process.
 */
import type { SpeechToText, SttCapabilities, SttPartial, SttSession } from '../../voice/public'

export class SandboxScripts {
  private readonly lines = new Map<string, { words: string[]; taken: number; startedAt: number; ms: number; at?: number }[]>()
  /** Per call: where the audio pushed to its session ends in the caller's stream (ms). */
  private readonly reached = new Map<string, number>()

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The callee on call `callId` starts saying `text`, whose audio lasts `ms` (0: known at once), from `at` ms into its stream. */
  said(callId: string, text: string, ms = 0, at?: number): void {
    const said = this.lines.get(callId) ?? []
    said.push({ words: text.split(' '), taken: 0, startedAt: this.now(), ms, ...(at !== undefined && Number.isFinite(at) ? { at } : {}) })
    this.lines.set(callId, said)
  }

  /** Words of each line heard by now: a word shows once its share of the line's audio has been heard, as an engine transcribes it after it is said. */
  private heard(l: { words: string[]; startedAt: number; ms: number; at?: number }, now: number, callId: string): number {
    const elapsed = l.at === undefined ? now - l.startedAt : (this.reached.get(callId) ?? 0) - l.at
    const share = l.ms <= 0 ? 1 : Math.min(1, Math.max(0, elapsed) / l.ms)
    return Math.floor(share * l.words.length)
  }

  /** What a live engine would have heard by now and not yet finalised, without taking it. */
  peek(callId: string): string {
    const now = this.now()
    return (this.lines.get(callId) ?? [])
      .map((l) => l.words.slice(l.taken, this.heard(l, now, callId)).join(' '))
      .filter(Boolean)
      .join(' ')
  }

  /** Every word said and not yet finalised, heard or not. */
  peekAll(callId: string): string {
    return (this.lines.get(callId) ?? [])
      .map((l) => l.words.slice(l.taken).join(' '))
      .filter(Boolean)
      .join(' ')
  }

  /**
   * The words heard since the last take (a finalise): whole lines once said, the heard part of a
   * line still being said (the rest comes with a later take), as a streaming engine finalises.
   */
  take(callId: string): string {
    const now = this.now()
    const lines = this.lines.get(callId) ?? []
    const out: string[] = []
    for (const l of lines) {
      const upTo = this.heard(l, now, callId)
      if (upTo > l.taken) out.push(l.words.slice(l.taken, upTo).join(' '))
      l.taken = Math.max(l.taken, upTo)
    }
    const left = lines.filter((l) => l.taken < l.words.length)
    if (left.length) this.lines.set(callId, left)
    else this.lines.delete(callId)
    return out.join(' ')
  }

  /** The call's session has been pushed audio ending `streamMs` into the stream, or (unstamped) `ms` more. */
  pushed(callId: string, ms: number, streamMs?: number): void {
    const before = this.reached.get(callId) ?? 0
    this.reached.set(callId, streamMs !== undefined && streamMs > 0 ? Math.max(before, streamMs) : before + ms)
  }

  forget(callId: string): void {
    this.lines.delete(callId)
    this.reached.delete(callId)
  }
}

/** Streams its scripted line's words as their audio arrives, as written (punctuated); judges no turn. */
const SANDBOX_CAPABILITIES: SttCapabilities = { streaming: true, interimWords: true, punctuation: true, endOfTurn: false, eagerEndOfTurn: false, wordTimings: false }

export class SandboxStt implements SpeechToText {
  readonly name = 'sandbox'

  constructor(
    private readonly scripts: SandboxScripts,
    private readonly callId: string,
  ) {}

  async open(): Promise<SttSession> {
    const { scripts, callId } = this
    let heardAudio = false
    let heard = ''
    const partials: ((p: SttPartial) => void)[] = []
    return {
      sampleRate: 8_000,
      capabilities: SANDBOX_CAPABILITIES,
      push(pcm, streamMs) {
        heardAudio = true
        scripts.pushed(callId, (pcm.length * 1000) / 8_000, streamMs)
        // Streams like a live engine: the line being said is "heard" as its audio arrives.
        const now = scripts.peek(callId)
        if (now === heard) return
        heard = now
        // Final once every line said so far is heard whole, as an engine finalises after the last word.
        for (const l of partials) l({ text: now, stable: now === scripts.peekAll(callId), endOfSpeech: false })
      },
      async finalize() {
        heard = ''
        if (!heardAudio) return ''
        heardAudio = false
        return scripts.take(callId)
      },
      onPartial(listener) {
        partials.push(listener)
      },
      async close() {
        scripts.forget(callId)
      },
    }
  }
}
