/**
 * The agent's turns as the caller hears them: the one playing (a reply, or a fixed line: the
 * opening, a resumed sentence, a goodbye), one started early on the caller's words and held, and
 * what the caller heard of each, stored when it has played or was cut (marks tell how far). When
 * a turn is heard, cut, resumed or answered is the chart's decision (machines/voice-turn.ts); this
 * carries it out.
 */
import type { AgentVoice } from './agent-voice'
import type { CallLine } from './call-line'
import type { Interruptible, Interruption } from './interrupt-signal'
import { keypadLine, keypadPrompt } from './keypad'
import type { TurnLatency } from './latency'
import type { Playout } from './playout'
import { type ReplyTurn, sameWords } from './reply-turn'

export interface AgentTurnsParts {
  line: CallLine
  voice: AgentVoice
  playout: Playout
  /** The call is over. */
  over: () => boolean
  /** The turn the caller hears has played out (stored): what comes next is the session's to say. */
  played: (turn: ReplyTurn) => void
  /** A stop cut the agent off: what the caller had not heard of what it meant to say ('' when nothing). */
  stopped: (unheard: string) => void
}

export class AgentTurns implements Interruptible {
  /** The reply being heard (or about to be), and one started early on the caller's words, held. */
  private turn: ReplyTurn | null = null
  private early: ReplyTurn | null = null
  /** An answer made and not yet released: its first audio is not ready. */
  private pending: ReplyTurn | null = null
  /** The caller's line of the pending answer: written when the answer is heard, or when the call ends before it is. */
  private pendingLine = ''
  /** The last turn's storing of what was heard. */
  stored: Promise<void> = Promise.resolve()
  /** The call is being handed off: answers made meanwhile wait (`resume`), so none starts playing as the line goes. */
  private hold: { until: Promise<void>; lift: () => void } | null = null

  constructor(private readonly parts: AgentTurnsParts) {}

  /** Is `id` the turn the caller hears now? */
  current(id: number): ReplyTurn | null {
    return this.turn?.id === id ? this.turn : null
  }

  /** The caller paused on words: the reply starts now, held until the turn is over. */
  preempt(text: string): void {
    if (!text.trim() || (this.early && sameWords(this.early.text, text))) return
    this.dropEarly()
    this.early = this.parts.voice.reply(text, true)
  }

  /** The caller's words changed: an early reply on other words goes. */
  wordsChanged(text: string): void {
    if (this.early && !sameWords(this.early.text, text)) this.dropEarly()
  }

  dropEarly(): void {
    this.early?.cancel()
    this.early = null
  }

  /**
   * The turn is over on `text` (and `keys` pressed during it, '' when none): the answer (the early
   * reply when it matches) is made held, and released once its first audio is ready: only then are
   * the caller's line and the answer written and heard. Until then the caller may go on
   * (`withdraw`), and the answer leaves no trace. The transcript holds keys as `[keypad] 1234#`
   * after any words; the agent reads what was pressed.
   */
  answer(text: string, keys: string, marks: Pick<TurnLatency, 'speechEndAt' | 'endpointedAt' | 'sttFinalAt' | 'sttQueueMs'>): void {
    if (this.parts.over()) return
    const asked = [text, keys && keypadPrompt(keys)].filter(Boolean).join(' ')
    const early = this.early && sameWords(this.early.text, asked) ? this.early : null
    if (!early) this.dropEarly()
    this.early = null
    this.withdraw()
    const turn = early ?? this.parts.voice.reply(asked, true)
    turn.latency = { turn: turn.id, ...marks, llmFirstTokenAt: turn.firstTokenAt, ttsFirstByteAt: turn.ttsFirstByteAt, firstAudioSentAt: null, firstMarkEchoedAt: null }
    this.pending = turn
    this.pendingLine = [text, keys && keypadLine(keys)].filter(Boolean).join(' ')
    // In one step, so the caller cannot go on between the line written and the answer heard (the
    // record keeps lines in the order they are said).
    const heard = () => {
      if (this.pending !== turn || turn.signal.aborted || this.parts.over()) return
      this.pending = null
      this.writeCallerLine(this.pendingLine)
      this.hear(turn, true)
      turn.release()
    }
    void turn.audible.then(() => (this.hold ? void this.unheld().then(heard) : heard()))
  }

  /** Until no hand-off holds answers back. */
  private async unheld(): Promise<void> {
    while (this.hold) await this.hold.until
  }

  /**
   * The interruption signal (interrupt-signal.ts), after the playout has taken it: a stop cancels
   * the reply; a pause holds answers back and ends the reply once the sentence heard has played
   * (`paused` resolves then); a resume says the rest of a stopped sentence, or lets answers go.
   * An end is the session's to follow with the goodbye: nothing is cancelled or reported here.
   */
  interrupted(signal: Interruption): void {
    if (signal.kind === 'stop') this.parts.stopped(this.stop())
    else if (signal.kind === 'pause') this.paused = this.pause()
    else if (signal.kind === 'end') return
    else if (signal.rest !== null) this.say(signal.rest)
    else this.resume()
  }

  /** The last pause's sentence has played (its reply stopped). */
  paused: Promise<void> = Promise.resolve()

  private async pause(): Promise<void> {
    if (!this.hold) {
      let lift = () => {}
      const until = new Promise<void>((resolve) => (lift = resolve))
      this.hold = { until, lift }
    }
    const turn = this.turn
    await this.parts.playout.finishing
    turn?.cancel()
  }

  private resume(): void {
    const hold = this.hold
    this.hold = null
    hold?.lift()
  }

  /** An answer made but not yet heard: the caller went on, so it goes, with no trace (false when there is none, or it is already heard). */
  withdraw(): boolean {
    const turn = this.pending
    if (!turn) return false
    this.pending = null
    turn.cancel()
    return true
  }

  /**
   * The call ends (a goodbye, or the line closed) with an answer not yet heard: the answer goes,
   * the caller's words stay in the transcript (they were said).
   */
  settle(): void {
    if (!this.pending) return
    const line = this.pendingLine
    this.withdraw()
    const previous = this.stored
    this.stored = previous.then(() => this.writeCallerLine(line))
  }

  /** The call ended with the caller's turn unanswered: their words (once known) are stored after what came before. */
  keepCallerWords(words: Promise<string>): void {
    const previous = this.stored
    this.stored = previous.then(() => words).then((text) => (text ? this.writeCallerLine(text) : undefined))
  }

  private writeCallerLine(text: string): Promise<void> {
    const { line } = this.parts
    return line.customerSaid(text).catch((err) => line.log('warn', "could not store the caller's words", { err: String(err) }))
  }

  /** Is there an answer made that the caller has not begun to hear? */
  get unheard(): boolean {
    return this.pending !== null
  }

  /** Presses keys on the line (the agent's send_digits), as a turn of their own. */
  pressKeys(digits: string): void {
    const turn = this.parts.voice.turn('', false)
    this.hear(turn, false)
    this.parts.voice.pressKeys(turn, digits)
  }

  /** Speaks fixed text (the opening, a resumed sentence, a goodbye). */
  say(text: string, options: { opening?: boolean; endAfter?: boolean } = {}): void {
    const turn = this.parts.voice.turn('', false)
    turn.endAfter = options.endAfter ?? false
    this.hear(turn, false, options.opening)
    this.parts.voice.speakText(turn, text)
  }

  /**
   * The agent stopped (the playout cleared): its reply is cancelled. Returns what the caller had
   * not heard of what it meant to say (marks tell where they were): the rest of the sentence
   * playing and every sentence written after it, for a resume after a false interruption.
   */
  private stop(): string {
    const cleared = this.parts.playout.stopped
    const turn = this.turn
    turn?.cancel()
    this.parts.line.log('info', 'barge-in: playback cleared', { turn: cleared?.turn, heard: cleared?.heard.length })
    if (!cleared || !turn || cleared.turn !== turn.id) return ''
    const meant = turn.written.join(' ')
    return meant.startsWith(cleared.heard) ? meant.slice(cleared.heard.length).trim() : cleared.unheardOfSentence
  }

  /** The call is over: replies stop; what was heard of the current turn is final. */
  close(): void {
    this.resume()
    this.settle()
    this.turn?.cancel()
    this.early?.cancel()
    this.parts.playout.close()
    this.parts.voice.close()
  }

  /** `turn` is the one the caller hears now: the previous one stops; its audio goes to the line as it comes. */
  private hear(turn: ReplyTurn, answer: boolean, opening = false): void {
    if (this.turn && this.turn !== turn) this.turn.cancel()
    this.turn = turn
    this.parts.playout.begin(turn.id, (heard) => {
      const previous = this.stored
      this.stored = previous.then(() => this.played(turn, heard, answer, opening))
    })
  }

  /** The turn's audio has played (or was cut): memory and transcript keep what was heard. */
  private async played(turn: ReplyTurn, heard: string, answer: boolean, opening: boolean): Promise<void> {
    const { line } = this.parts
    // A reply that was only keys (nothing said) keeps its stored text: the keys' own turn is heard next.
    const keysOnly = !!turn.reply?.digits && !turn.reply.reply
    if (heard || (turn.reply?.messageId && !keysOnly))
      await line.agentSaid(heard, answer ? (turn.reply?.messageId ?? null) : null, opening, turn.id).catch((err) => line.log('warn', 'could not store what the agent said', { err: String(err) }))
    if (turn.latency && turn.latency.firstAudioSentAt !== null) line.latency(turn.latency)
    if (this.turn !== turn || this.parts.over()) return
    this.parts.played(turn)
  }
}
