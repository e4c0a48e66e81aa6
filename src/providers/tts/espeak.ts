/**
 * Local text-to-speech with espeak-ng: no network, no key. 22,050 Hz mono 16-bit, in the voices of
 * voices.ts at 175 words a minute (times the agent's `voice.speed`). Two ways to the same synthesiser:
 *
 * - in-process (`libespeak-ng`, espeak-pool.ts): a few synthesiser threads shared by every call,
 *   ~2–3 ms of CPU a sentence — used when a pool is given (speech.ts gives one when the library
 *   loads);
 * - the `espeak-ng` program, one process a sentence (~45 ms of CPU to start one): where the library
 *   is absent or would not start. It writes a WAV to stdout; the header is skipped and the samples
 *   stream as the process produces them.
 *
 * The library's samples for a sentence are the program's, to the sample, in a fresh synthesiser;
 * a synthesiser that has spoken before carries a little of its state (the voice's flutter, its
 * random jitter) into the next sentence, as the program does between the sentences of one text.
 */
import { spawn } from 'node:child_process'
import type { SynthesisOptions, TextToSpeech } from '../../voice/public'
import { type EspeakPool, SynthUnavailable } from './espeak-pool'
import { pcmChunks } from './pcm-stream'
import { providerVoice } from './voices'

const RATE = 22_050
/** The canonical WAV header espeak-ng writes to stdout. */
const WAV_HEADER = 44
/** 175 words a minute: espeak's default is 175; phone callers follow 150–190 comfortably. */
export const WORDS_PER_MINUTE = 175

/** The rate `-s` takes for an agent's speed (a factor of the engine's own). */
export const wordsPerMinute = (speed?: number | null) => (speed == null ? WORDS_PER_MINUTE : Math.round(WORDS_PER_MINUTE * speed))

export class EspeakTts implements TextToSpeech {
  readonly name = 'espeak'
  readonly sampleRate = RATE

  /** `pool`: the in-process synthesisers; without one (or once it is unavailable) every sentence is a process. */
  constructor(
    private readonly binary = 'espeak-ng',
    private readonly pool: EspeakPool | null = null,
  ) {}

  async *synthesize(text: string, options: SynthesisOptions): AsyncIterable<Int16Array> {
    const voice = providerVoice('espeak', options.voice)
    if (this.pool && !this.pool.unavailable) {
      try {
        yield* this.inProcess(this.pool, text, voice, wordsPerMinute(options.speed), options.signal)
        return
      } catch (err) {
        // Nothing was said yet when the library turns out unusable: the program says it instead.
        if (!(err instanceof SynthUnavailable)) throw err
      }
    }
    yield* this.process(text, voice, wordsPerMinute(options.speed), options.signal)
  }

  private async *inProcess(pool: EspeakPool, text: string, voice: string, wpm: number, signal?: AbortSignal): AsyncIterable<Int16Array> {
    if (signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
    const pieces: Int16Array[] = []
    const state: { ended: boolean; failure: Error | null } = { ended: false, failure: null }
    let wake: (() => void) | null = null
    const poke = () => {
      wake?.()
      wake = null
    }
    const cancel = pool.speak({
      text,
      voice,
      wpm,
      audio: (pcm) => {
        pieces.push(pcm)
        poke()
      },
      done: () => {
        state.ended = true
        poke()
      },
      failed: (err) => {
        state.failure = err
        poke()
      },
    })
    signal?.addEventListener('abort', poke, { once: true })
    try {
      for (;;) {
        if (signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
        const piece = pieces.shift()
        if (piece) yield piece
        else if (state.failure) throw state.failure
        else if (state.ended) return
        else await new Promise<void>((resolve) => (wake = resolve))
      }
    } finally {
      signal?.removeEventListener('abort', poke)
      if (!state.ended && !state.failure) cancel()
    }
  }

  private async *process(text: string, voice: string, wpm: number, signal?: AbortSignal): AsyncIterable<Int16Array> {
    const child = spawn(this.binary, ['--stdout', '-v', voice, '-s', String(wpm), '--', text], { stdio: ['ignore', 'pipe', 'ignore'] })
    const abort = () => child.kill('SIGKILL')
    signal?.addEventListener('abort', abort, { once: true })
    try {
      yield* pcmChunks(child.stdout as AsyncIterable<Uint8Array>, { signal, skipBytes: WAV_HEADER })
    } finally {
      signal?.removeEventListener('abort', abort)
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }
}
