/**
 * The agent's side of a call's pipeline: a reply (the model streaming into clauses) or a fixed
 * line, clauses → TTS → the playout, in order. Turn-taking (session.ts) decides when a turn is
 * heard; this only makes its audio. A held turn (an early reply) has its text streamed and its
 * first clause synthesised, but nothing reaches the playout until it is released.
 */

import type { CallLine } from './call-line'
import { PHONE_RATE, resample } from './codecs'
import type { Interruptible, Interruption } from './interrupt-signal'
import { keypadLine, keypadTones } from './keypad'
import { VOICE_LINES } from './phrases'
import type { Playout } from './playout'
import type { TextToSpeech, WordTiming } from './ports/tts'
import { ReplyTurn } from './reply-turn'
import { ClauseChunker } from './sentences'
import { SpeechQueue } from './speech-queue'

export interface AgentVoiceParts {
  line: CallLine
  tts: TextToSpeech
  playout: Playout
  now: () => number
  /** Synthesised audio of fixed lines (phrase-cache.ts): the opening and goodbyes play at once. */
  phrases?: { get(key: string): Int16Array[] | null; put(key: string, audio: Int16Array[]): void }
  /** Speech could not be made: the call cannot go on. */
  ttsFailed(err: Error): void
}

export class AgentVoice implements Interruptible {
  private seq = 0

  constructor(private readonly parts: AgentVoiceParts) {}

  /** Synthesis stops with its turn's cancel (the agent's part of a stop): the signal leaves nothing more here. */
  interrupted(_signal: Interruption): void {}

  /** The call is over: the engine lets go of what it holds. */
  close(): void {
    this.parts.tts.close?.()
  }

  /** A new turn (an answer to `text`, or '' for a fixed line); `held` until released. */
  turn(text: string, held: boolean): ReplyTurn {
    return new ReplyTurn(++this.seq, text, held)
  }

  /** The agent's answer to `text`: the model streams into clauses, clauses into speech. */
  reply(text: string, held: boolean): ReplyTurn {
    const { line, now } = this.parts
    const turn = this.turn(text, held)
    const queue = this.speak(turn)
    const chunker = new ClauseChunker()
    void (async () => {
      try {
        const reply = await line.respond(
          text,
          (piece) => {
            if (turn.firstTokenAt === null) turn.firstTokenAt = now()
            if (turn.latency && turn.latency.llmFirstTokenAt === null) turn.latency.llmFirstTokenAt = turn.firstTokenAt
            for (const s of chunker.push(piece)) queue.push(s)
          },
          turn.signal,
          held ? turn.released : undefined,
          // The model's first call is over while held: what it wrote is all it has before the rest
          // runs (a tool), so it is spoken; with nothing written, the turn cannot wait for audio.
          () => {
            for (const s of chunker.flush()) queue.push(s)
            if (!queue.count) turn.markAudible()
          },
        )
        turn.reply = reply
        turn.endAfter = reply.endCall
        for (const s of chunker.flush()) queue.push(s)
        // A turn with no streamed text (tools only, the engine's fallback line): say the stored reply.
        if (!queue.count && reply.reply) queue.push(reply.reply)
      } catch (err) {
        if (turn.signal.aborted) return queue.close()
        line.log('warn', 'the agent could not answer', { err: String(err) })
        queue.push(VOICE_LINES.trouble)
      }
      queue.close()
    })()
    return turn
  }

  /** Fixed text (the opening, a resumed sentence, a goodbye) spoken as `turn`, from the phrase cache when it is there. */
  speakText(turn: ReplyTurn, text: string): void {
    const queue = this.speak(turn, true)
    const chunker = new ClauseChunker()
    for (const s of [...chunker.push(text), ...chunker.flush()]) queue.push(s)
    queue.close()
  }

  /** Keys pressed as `turn` (send_digits): their tones go to the line; what was heard of them reads `[keypad] 1`. */
  pressKeys(turn: ReplyTurn, digits: string): void {
    const { playout } = this.parts
    void (async () => {
      if (!(await turn.whenReleased())) return
      const keys = playout.sentence(keypadLine(digits))
      await playout.audio(keys, keypadTones(digits, PHONE_RATE))
      playout.sentenceDone(keys)
      playout.end()
    })()
  }

  /**
   * Clauses → TTS → the line, in order; the turn's signal stops it. A held turn's first clause is
   * synthesised at once and waits, so the caller hears it the moment the turn is released.
   */
  private speak(turn: ReplyTurn, fixed = false): SpeechQueue {
    const { tts, line, playout, now, phrases } = this.parts
    const queue = new SpeechQueue((sentence) => turn.written.push(sentence))
    let textEnded = () => {}
    const spokenTurn = { id: String(turn.id), ended: new Promise<void>((resolve) => (textEnded = resolve)) }
    void (async () => {
      try {
        for await (const sentence of queue) {
          if (turn.signal.aborted) break
          const speed = line.dials?.speed ?? null
          const key = `${tts.name}|${line.voice}|${line.language}|${speed ?? ''}|${sentence}`
          const cached = fixed ? phrases?.get(key) : null
          const keep: Int16Array[] | null = fixed && !cached ? [] : null
          const words: { end: number }[] = []
          const onWords = (timed: WordTiming[]) => words.push(...timed.map((w) => ({ end: Math.round(w.end * PHONE_RATE) })))
          const audio = cached ? fromCache(cached) : tts.synthesize(sentence, { voice: line.voice, language: line.language, speed, signal: turn.signal, turn: spokenTurn, onWords })
          const it = audio[Symbol.asyncIterator]()
          const first = it.next()
          void first.then(() => (turn.ttsFirstByteAt ??= now())).catch(() => {})
          void first.finally(() => turn.markAudible()).catch(() => {})
          if (!(await turn.whenReleased())) break
          if (turn.latency && turn.latency.ttsFirstByteAt === null && turn.ttsFirstByteAt !== null) turn.latency.ttsFirstByteAt = turn.ttsFirstByteAt
          const spoken = playout.sentence(sentence, words)
          for (let r = await first; !r.done; r = await it.next()) {
            if (turn.latency && turn.latency.ttsFirstByteAt === null) turn.latency.ttsFirstByteAt = now()
            keep?.push(r.value)
            await playout.audio(spoken, resample(r.value, tts.sampleRate, PHONE_RATE))
          }
          if (keep && !turn.signal.aborted) phrases?.put(key, keep)
          playout.sentenceDone(spoken)
        }
      } catch (err) {
        if (!turn.signal.aborted) {
          line.log('warn', 'text-to-speech failed', { err: String(err) })
          this.parts.ttsFailed(err as Error)
        }
      }
      textEnded()
      // A reply with nothing to say still ends its turn, once it is the one being heard.
      turn.markAudible()
      if (await turn.whenReleased()) playout.end()
    })()
    return queue
  }
}

async function* fromCache(chunks: Int16Array[]): AsyncIterable<Int16Array> {
  yield* chunks
}
