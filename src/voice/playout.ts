/**
 * The agent's audio to the line, paced, and what the caller actually heard.
 *
 * Audio is cut into CHUNK_MS chunks and sent in real time, keeping LEAD_MS buffered at the far
 * end, so that a stall of this process (or of the machine it runs on) shorter than that is not
 * heard. Barge-in does not wait for that audio: `clear` makes the line drop what it buffered at
 * once. Each chunk is followed by a `mark`; the line echoes a mark when it has played everything
 * before it, so the last echoed mark says how much of the reply the caller heard: the turn's text
 * is cut there, to the last whole word (Twilio also echoes the marks a `clear` dropped, so echoes
 * after a clear do not count).
 */

import { type ActorTimers, actorTimers, systemClock } from '../clock'
import type { OutboundFrame } from './frames'
import { type HeardTurn, heardText, unheardOfSentence, wholeText } from './heard-text'
import type { Interruptible, Interruption } from './interrupt-signal'
import { playoutLead } from './playout-lead'
import { endsSentence } from './sentences'

/** ~100 ms chunks, MEDIA_CHUNK_MS's default (config.ts allows 20–200; Twilio plays 20 ms frames, any multiple is accepted). */
export const CHUNK_MS = 100
/**
 * Audio kept ahead of the line: what a stall can take before the caller hears a gap. bench:soak
 * (300 calls placed at 20 a second on this 2-core machine) measured the longest a playing call
 * waited for its next chunk at 130–150 ms with the machine otherwise quiet, 230–310 ms with a
 * CPU hog on one core, and 0.75–1.2 s while other engineers' benchmarks ran on it. 200 ms (the
 * line then holds 200–300 ms) is at the edge of the second and loses the third; a second covers
 * them. It costs nothing at barge-in (Twilio, the sandbox callee and the WebRTC link all drop
 * their buffer on `clear`), and marks still say what was played.
 */
export const LEAD_MS = 1_000
/**
 * Reply audio held here before TTS must wait (backpressure); TTS resumes once half of it has
 * played. Four seconds: TTS is then read (decoded, resampled) about as fast as the reply plays
 * instead of all at once when the turn starts, which at 20 calls a second starting to talk is
 * what starved the calls already playing; and the 2 s still queued when it resumes (plus the
 * line's lead) are ~10× a vendor TTS's time to first audio (150–250 ms) and ~200× espeak-ng's.
 */
export const MAX_QUEUED_MS = 4_000
/**
 * How often what the caller has heard of a turn is reported while it plays (besides at each
 * sentence): a process that dies mid-turn loses at most this much of the agent's words.
 */
export const HEARD_EVERY_MS = 1_000
/** When the line stops echoing marks (socket trouble), a turn counts as over this long after its audio should have played. */
export const ECHO_GRACE_MS = 1_500

interface Turn extends HeardTurn {
  id: number
  ended: boolean
  cleared: boolean
  lastMark: string | null
  firstSentAt: number | null
  firstHeardAt: number | null
  /** What `onHeard` last reported, and when. */
  reported: { text: string; at: number } | null
  onPlayed: ((heard: string, complete: boolean) => void) | null
  grace: unknown
  /** Finishing (`finishSentence`): the piece that ends the sentence heard, -1 until it is known; later ones do not play. */
  last: number | null
  /** Waiting for the turn to be over (`finishSentence`). */
  over: (() => void)[]
}

interface Chunk {
  turn: Turn
  sentence: number
  pcm: Int16Array
  /** Samples of its sentence played once this chunk has played. */
  upTo: number
}

export interface PlayoutOptions {
  rate: number
  chunkMs?: number
  now?: () => number
  /** First agent audio of a turn went out / its first mark came back (latency bookkeeping). */
  onFirstSent?: (turnId: number, at: number) => void
  onFirstHeard?: (turnId: number, at: number) => void
  /** What the caller has heard of the turn so far, at each sentence heard and every HEARD_EVERY_MS. */
  onHeard?: (turnId: number, heard: string) => void
  /** Every frame sent, for the recording; audio with when the line should start playing it (the playout's schedule), for the echo reference. */
  onSent?: (frame: OutboundFrame, playsAt?: number) => void
  /** Where its waits run (pacing, the echo grace): the system's timers, or a simulated clock's in tests (with `now` from the same clock). */
  timers?: Timers
}

/** Timers as XState's actor clock has them (its SimulatedClock is one). */
export type Timers = ActorTimers

/** A sentence as `Playout.sentence` gave it: its turn (opaque outside the playout) and its place in it. */
export interface SentenceRef {
  readonly turn: object
  readonly index: number
}

export class Playout implements Interruptible {
  /** What the last stop cleared (`clear`), and the sentence a pause lets play (`finishSentence`). */
  stopped: ReturnType<Playout['clear']> = null
  finishing: Promise<void> = Promise.resolve()
  private readonly queue: Chunk[] = []
  private queuedSamples = 0
  private readonly marks = new Map<string, { turn: Turn; sentence: number; upTo: number }>()
  private turn: Turn | null = null
  private playhead = 0
  private timer: unknown = null
  private seq = 0
  private blocked = false
  private closed = false
  private readonly waiting: (() => void)[] = []
  private readonly chunkSamples: number
  private readonly now: () => number
  private readonly timers: Timers

  constructor(
    private readonly send: (frame: OutboundFrame) => boolean,
    private readonly options: PlayoutOptions,
  ) {
    this.chunkSamples = Math.round(((options.chunkMs ?? CHUNK_MS) * options.rate) / 1000)
    this.now = options.now ?? (() => performance.now())
    this.timers = options.timers ?? actorTimers(systemClock)
  }

  /** Is the agent's audio still playing (queued or buffered at the line)? */
  get speaking(): boolean {
    return this.queue.length > 0 || this.playhead > this.now()
  }

  /** A turn is open and has nothing left to send: its next audio is still being made. */
  get starved(): boolean {
    const turn = this.turn
    return turn !== null && !turn.ended && !turn.cleared && this.queue.length === 0
  }

  /** A new agent turn; `onPlayed` gets the heard text when its audio has played (or was cleared). */
  begin(id: number, onPlayed: (heard: string, complete: boolean) => void): void {
    const previous = this.turn
    if (previous?.onPlayed) {
      // A turn superseded before it finished: its unsent audio goes, what was heard of it stands.
      this.unqueue((c) => c.turn === previous)
      previous.cleared = true
      this.settle(previous, heardText(previous), false)
    }
    this.turn = { id, sentences: [], heard: null, ended: false, cleared: false, lastMark: null, firstSentAt: null, firstHeardAt: null, reported: null, onPlayed, grace: null, last: null, over: [] }
  }

  /**
   * A sentence of the current turn (`words`: where its words end, as the engine times them); the
   * handle for its `audio` names its turn: audio after a cut or superseded turn must not play on.
   */
  sentence(text: string, words?: { end: number }[]): SentenceRef {
    const turn = this.turn!
    turn.sentences.push({ text, samples: 0, complete: false, words })
    const index = turn.sentences.length - 1
    if (turn.last === -1 && endsSentence(text)) this.endWith(turn, index)
    return { turn, index }
  }

  /** Audio (line rate) of a sentence; resolves when there is room for more (backpressure on TTS). */
  async audio(ref: SentenceRef, pcm: Int16Array): Promise<void> {
    const turn = ref.turn as Turn
    if (turn !== this.turn || turn.cleared || this.closed || (turn.last !== null && turn.last >= 0 && ref.index > turn.last)) return
    const sentence = ref.index
    const s = turn.sentences[sentence]!
    for (let at = 0; at < pcm.length; at += this.chunkSamples) {
      const piece = pcm.subarray(at, Math.min(pcm.length, at + this.chunkSamples))
      s.samples += piece.length
      this.queue.push({ turn, sentence, pcm: piece, upTo: s.samples })
      this.queuedSamples += piece.length
    }
    this.pump()
    while (this.queuedSamples > (MAX_QUEUED_MS * this.options.rate) / 1000 && !turn.cleared && !this.closed) {
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
  }

  /** The sentence's audio is complete: its length is known. */
  sentenceDone(ref: SentenceRef): void {
    const turn = ref.turn as Turn
    const s = turn.sentences[ref.index]
    if (s) s.complete = true
    this.maybeLastPlayed(turn)
  }

  /**
   * The current turn ends with the sentence the caller is hearing (the call is being handed off):
   * the pieces up to that sentence's end play (a reply's first piece may be a clause), no later
   * one does, and the promise resolves once it has played to its end, or the turn is over some
   * other way (cut, superseded, played out, the call closed); at once when nothing of the turn has
   * reached the line. What was heard is settled as for any turn.
   */
  finishSentence(): Promise<void> {
    const turn = this.turn
    if (!turn || turn.cleared || turn.onPlayed === null || this.closed || turn.lastMark === null) return Promise.resolve()
    if (turn.last === null) {
      const from = turn.heard?.sentence ?? 0
      turn.last = -1
      const last = turn.sentences.findIndex((s, i) => i >= from && endsSentence(s.text))
      if (last >= 0) this.endWith(turn, last)
    }
    const over = new Promise<void>((resolve) => turn.over.push(resolve))
    this.maybeLastPlayed(turn)
    return over
  }

  /** A finishing turn ends with piece `last`: later pieces' audio is dropped here, and at the line once `last` has played. */
  private endWith(turn: Turn, last: number): void {
    turn.last = last
    this.unqueue((c) => c.turn === turn && c.sentence > last)
    // A synthesis waiting for room rechecks: its piece may be one that no longer plays.
    for (const resolve of this.waiting.splice(0)) resolve()
  }

  /** No more audio for the current turn. */
  end(): void {
    const turn = this.turn
    if (!turn || turn.ended) return
    turn.ended = true
    this.maybePlayed(turn)
  }

  /**
   * A stop clears the line at once; an end clears it if the agent still speaks (the goodbye
   * follows); a pause lets the sentence heard play out, nothing after it (interrupt-signal.ts).
   */
  interrupted(signal: Interruption): void {
    if (signal.kind === 'stop') this.stopped = this.clear()
    else if (signal.kind === 'end' && this.speaking) this.clear()
    else if (signal.kind === 'pause') this.finishing = this.finishSentence()
  }

  /**
   * Barge-in: the line drops what it buffered (`clear`), the queue is emptied, and the turn's
   * heard text is what the echoed marks confirmed. Returns it, and the rest of the sentence the
   * caller was hearing (to resume after a false interruption).
   */
  clear(): { turn: number; heard: string; unheardOfSentence: string } | null {
    const turn = this.turn
    if (!turn || turn.cleared) return null
    turn.cleared = true
    this.drop()
    // The echo reference takes the same signal (interrupt-signal.ts): no `onSent` for this clear.
    this.send({ kind: 'clear' })
    this.playhead = this.now()
    const heard = heardText(turn)
    const unheard = unheardOfSentence(turn)
    this.settle(turn, heard, false)
    return { turn: turn.id, heard, unheardOfSentence: unheard }
  }

  /** The line echoed a mark. */
  echo(name: string): void {
    const mark = this.marks.get(name)
    if (!mark) return
    this.marks.delete(name)
    const { turn } = mark
    // Audio past the sentence a finishing turn ends with is not counted as heard: it is being cleared.
    if (turn.cleared || (turn.last !== null && turn.last >= 0 && mark.sentence > turn.last)) return
    const before = turn.heard?.sentence ?? 0
    turn.heard = { sentence: mark.sentence, samples: mark.upTo }
    const now = this.now()
    if (turn.firstHeardAt === null) {
      turn.firstHeardAt = now
      this.options.onFirstHeard?.(turn.id, turn.firstHeardAt)
    }
    // A sentence is whole once its last samples are heard, or once the next one's are (its end
    // may be echoed before the sentence is known to be complete).
    const sentence = turn.sentences[mark.sentence]!
    const whole = sentence.complete && mark.upTo >= sentence.samples ? mark.sentence + 1 : mark.sentence > before ? mark.sentence : 0
    // A settled turn's words went to `onPlayed`; a late echo reports nothing.
    if (this.options.onHeard && turn.onPlayed && (whole > 0 || now - (turn.reported?.at ?? turn.firstHeardAt) >= HEARD_EVERY_MS)) {
      const text = whole > 0 && whole <= mark.sentence ? wholeText(turn, whole) : heardText(turn)
      if (text && text !== turn.reported?.text) {
        turn.reported = { text, at: now }
        this.options.onHeard(turn.id, text)
      }
    }
    this.maybePlayed(turn)
    this.maybeLastPlayed(turn)
  }

  /** The socket drained: sending resumes. */
  drained(): void {
    this.blocked = false
    this.pump()
  }

  /** The call ended: what the current turn's caller heard is final. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.drop()
    const turn = this.turn
    if (turn && !turn.cleared) this.settle(turn, heardText(turn), false)
  }

  /** Takes the chunks `which` picks out of the queue, unsent. */
  private unqueue(which: (chunk: Chunk) => boolean): void {
    for (let i = this.queue.length - 1; i >= 0; i--) if (which(this.queue[i]!)) this.queuedSamples -= this.queue.splice(i, 1)[0]!.pcm.length
  }

  private drop(): void {
    this.queue.length = 0
    this.queuedSamples = 0
    if (this.timer !== null) this.timers.clearTimeout(this.timer)
    this.timer = null
    for (const resolve of this.waiting.splice(0)) resolve()
  }

  private maybePlayed(turn: Turn): void {
    if (!turn.ended || turn.cleared || turn.onPlayed === null) return
    if (this.queue.some((c) => c.turn === turn)) return
    if (turn.lastMark === null) {
      this.settle(turn, '', false)
      return
    }
    if (!this.marks.has(turn.lastMark)) {
      this.settle(turn, heardText(turn), true)
      return
    }
    // Waiting for the last echo; if the line has gone quiet, settle on what it confirmed.
    if (turn.grace === null) {
      const wait = Math.max(0, this.playhead - this.now()) + ECHO_GRACE_MS
      turn.grace = this.timers.setTimeout(() => this.settle(turn, heardText(turn), false), wait)
    }
  }

  /** A finishing turn's last sentence has played to its end: audio after it leaves the line, and the turn is over. */
  private maybeLastPlayed(turn: Turn): void {
    if (turn.last === null || turn.last < 0 || turn.onPlayed === null || turn.cleared) return
    const s = turn.sentences[turn.last]
    if (!s?.complete || turn.heard?.sentence !== turn.last || turn.heard.samples < s.samples) return
    turn.cleared = true
    this.unqueue((c) => c.turn === turn)
    for (const resolve of this.waiting.splice(0)) resolve()
    // Audio of a later piece still buffered at the line (its marks not echoed) goes.
    if ([...this.marks.values()].some((m) => m.turn === turn && m.sentence > turn.last!)) {
      this.send({ kind: 'clear' })
      this.options.onSent?.({ kind: 'clear' })
      this.playhead = this.now()
    }
    this.settle(turn, heardText(turn), true)
  }

  private settle(turn: Turn, heard: string, complete: boolean): void {
    if (turn.grace !== null) this.timers.clearTimeout(turn.grace)
    turn.grace = null
    const done = turn.onPlayed
    turn.onPlayed = null
    done?.(heard, complete && heard.length > 0)
    for (const resolve of turn.over.splice(0)) resolve()
  }

  private pump(): void {
    if (this.timer !== null || this.blocked || this.closed) return
    const lead = LEAD_MS
    const step = (paced = false) => {
      this.timer = null
      // Woken to keep the lead: what was left at the line then is the process's headroom (late
      // timers shrink it; at zero the caller hears a gap).
      if (paced) playoutLead.note(this.playhead - this.now())
      while (this.queue.length && !this.blocked) {
        const now = this.now()
        if (this.playhead - now > lead) {
          this.timer = this.timers.setTimeout(() => step(true), this.playhead - now - lead)
          return
        }
        const chunk = this.queue.shift()!
        this.queuedSamples -= chunk.pcm.length

        const frame: OutboundFrame = { kind: 'audio', pcm: chunk.pcm, sampleRate: this.options.rate }
        const ok = this.send(frame)
        this.options.onSent?.(frame, Math.max(this.playhead, now))
        const name = `${chunk.turn.id}.${++this.seq}`
        this.send({ kind: 'mark', name })
        this.marks.set(name, { turn: chunk.turn, sentence: chunk.sentence, upTo: chunk.upTo })
        chunk.turn.lastMark = name
        if (chunk.turn.firstSentAt === null) {
          chunk.turn.firstSentAt = now
          this.options.onFirstSent?.(chunk.turn.id, now)
        }
        this.playhead = Math.max(this.playhead, now) + (chunk.pcm.length * 1000) / this.options.rate
        if (this.waiting.length && this.queuedSamples <= (MAX_QUEUED_MS * this.options.rate) / 2000) for (const resolve of this.waiting.splice(0)) resolve()
        if (!ok) this.blocked = true
      }
    }
    step()
  }
}
