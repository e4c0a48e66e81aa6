/**
 * Local speech-to-text that decodes while the caller speaks: pocketsphinx decoders (Debian's
 * libpocketsphinx through bun:ffi, pocketsphinx-ffi.ts) shared by every call through a pool
 * (decoder-pool.ts). A call holds a decoder only while its caller speaks: the pipeline's VAD says
 * when speech starts (`speech()`), the session takes a decoder, feeds it the audio since a little
 * before, and `finalize` ends the utterance (`ps_end_utt`, ~2–3 ms) and gives the decoder back.
 *
 * Between utterances only a short pre-roll is kept. While every decoder is busy the utterance
 * waits for one with its audio kept; the decoder it gets catches up at ~9–15× real time. The wait is
 * reported (`queuedMs`) as a stage of the turn's latency.
 */
import { availableParallelism } from 'node:os'
import { SpeechError, type SpeechToText, type SttCapabilities, type SttPartial, type SttSession } from '../../voice/public'
import { type DecoderHolder, DecoderPool, type Lease, type PoolStats } from './decoder-pool'
import { DEBIAN_SPHINX, MODEL_FILES, type SphinxPaths, sphinxMissing } from './pocketsphinx-ffi'
import type { FromDecoder } from './pocketsphinx-worker'
import { PronouncingDictionary } from './sounds-like'

const RATE = 16_000
/**
 * Audio kept before the VAD's first speech window: its Silero windows are 32 ms and it calls
 * speech after a few of them, on its own thread; 400 ms covers the onset and gives the decoder
 * a little silence to start from.
 */
const PREROLL_SAMPLES = (400 * RATE) / 1000
/**
 * Silence after which a decoder is given back before the turn's final: the VAD has heard no
 * speech for this long (its pauses within a sentence are shorter), so the piece so far is ended
 * and its text kept for the final, and the decoder serves another caller while this turn's
 * endpointing waits (up to 1.5 s, end-of-turn.ts) — or after a noise that started no turn at all.
 */
const SEGMENT_SILENCE_MS = 800
/** A minute of an utterance's audio kept at most (for a wait or a replay): nobody speaks one turn longer. */
const MAX_UTTERANCE_SAMPLES = 60 * RATE
/**
 * A decoder following a live caller is busy 7–11% of a core (1.3–2.2 ms per 20 ms frame with
 * LIVE_SEARCH, pocketsphinx-ffi.ts): two per core keep decoding under a quarter of the machine, the
 * rest for the VAD, speech and the event loop. Each holds ~95 MB (its memory, not its CPU, is what
 * bounds the pool), started on first need and kept.
 */
export const DEFAULT_DECODERS = () => 2 * availableParallelism()
/** Two waiting utterances per decoder: at ~3 s an utterance, a wait of up to ~6 s, past which an utterance is refused. */
export const DEFAULT_QUEUE = (decoders: number) => 2 * decoders
/**
 * A final waits for the audio queued before it at ~0.1× real time, and for a decoder: thirty
 * seconds means the thread is stuck.
 */
const REPLY_TIMEOUT_MS = 30_000

export interface LiveSphinxOptions {
  paths?: SphinxPaths
  /** Decoders in the pool (default two per core). */
  decoders?: number
  /** Utterances that may wait for a decoder (default two per decoder). */
  queue?: number
  /** Each utterance's wait for a decoder, ms (the metrics). */
  onWait?: (ms: number) => void
}

export class PocketsphinxLiveStt implements SpeechToText {
  readonly name = 'pocketsphinx'
  private readonly paths: SphinxPaths
  readonly pool: DecoderPool
  private readonly dictionary: PronouncingDictionary

  constructor(options: LiveSphinxOptions = {}) {
    this.paths = options.paths ?? DEBIAN_SPHINX
    this.dictionary = new PronouncingDictionary(MODEL_FILES(this.paths.modelDir).dict)
    const size = Math.max(1, options.decoders ?? DEFAULT_DECODERS())
    this.pool = new DecoderPool({ paths: this.paths, size, queue: Math.max(0, options.queue ?? DEFAULT_QUEUE(size)), ...(options.onWait ? { onWait: options.onWait } : {}) })
  }

  get decoders(): PoolStats {
    return this.pool.stats()
  }

  async open(): Promise<SttSession> {
    const missing = sphinxMissing(this.paths)
    if (missing) throw new SpeechError('pocketsphinx', missing)
    this.pool.spare()
    return new LiveSession(this.pool, this.dictionary)
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}

/** Chunks of audio up to a bound; the oldest go first. */
class Kept {
  chunks: Int16Array[] = []
  samples = 0
  constructor(private readonly max: number) {}
  add(pcm: Int16Array): void {
    this.chunks.push(pcm)
    this.samples += pcm.length
    while (this.samples - this.chunks[0]!.length >= this.max) this.samples -= this.chunks.shift()!.length
  }
  take(): Int16Array[] {
    const all = this.chunks
    this.chunks = []
    this.samples = 0
    return all
  }
}

type Waiter = { resolve: (text: string) => void; reject: (err: Error) => void }

/** One utterance: from the VAD's first speech to its final. */
class Utterance implements DecoderHolder {
  readonly audio = new Kept(MAX_UTTERANCE_SAMPLES)
  lease: Lease | null = null
  queuedMs = 0
  private ending: Waiter | null = null
  private retried = false
  refusedWith: string | null = null
  /** Refused for want of a decoder (the pool at capacity), not for a decoder that failed. */
  private refusedBusy = false
  done = false

  constructor(
    private readonly pool: DecoderPool,
    preroll: Int16Array[],
    private readonly partial: (text: string) => void,
  ) {
    for (const p of preroll) this.audio.add(p)
    if (pool.take(this) === 'refused') {
      this.refusedWith = 'every speech decoder is busy and the queue for them is full'
      this.refusedBusy = true
    }
  }

  push(pcm: Int16Array): void {
    this.audio.add(pcm)
    this.lease?.audio(pcm)
  }

  /** Ends the utterance: its text once a decoder has heard all of it. */
  finish(): Promise<string> {
    if (this.refusedWith) return this.fail(new SpeechError('pocketsphinx', this.refusedWith, { busy: this.refusedBusy }))
    return new Promise<string>((resolve, reject) => {
      this.ending = { resolve, reject }
      this.lease?.finalize()
    })
  }

  /** The call ended: a decoder held or awaited for audio nobody will finalize is let go. */
  abandon(): void {
    if (this.ending) return
    this.done = true
    if (this.lease) this.pool.give(this.lease)
    else this.pool.cancel(this)
  }

  /** The session closed before this utterance's final. */
  fail(err: Error): Promise<never> {
    this.done = true
    const ending = this.ending
    this.ending = null
    if (this.lease) this.pool.give(this.lease)
    else this.pool.cancel(this)
    ending?.reject(err)
    return Promise.reject(err)
  }

  granted(lease: Lease, waitedMs: number): void {
    if (this.done) return void this.pool.give(lease)
    this.lease = lease
    this.queuedMs += waitedMs
    for (const pcm of this.audio.chunks) lease.audio(pcm)
    if (this.ending) lease.finalize()
  }

  heard(m: Extract<FromDecoder, { t: 'partial' } | { t: 'final' }>): void {
    if (m.t === 'partial') return void this.partial(m.text)
    const ending = this.ending
    if (!ending) return
    this.ending = null
    this.done = true
    if (this.lease) this.pool.give(this.lease)
    ending.resolve(m.text)
  }

  lost(reason: string): void {
    this.lease = null
    if (this.done) return
    // Its audio is kept: once on another decoder, at the head of the queue.
    if (!this.retried) {
      this.retried = true
      if (this.pool.take(this, true) !== 'refused') return
      this.refusedBusy = true
    }
    this.refusedWith = reason
    if (this.ending) void this.fail(new SpeechError('pocketsphinx', reason, { busy: this.refusedBusy })).catch(() => {})
  }
}

/** Decodes as audio arrives and reports its hypothesis (`onPartial`): bare lower-case words. */
const LIVE_SPHINX_CAPABILITIES: SttCapabilities = { streaming: true, interimWords: true, punctuation: false, endOfTurn: false, eagerEndOfTurn: false, wordTimings: false }

class LiveSession implements SttSession {
  readonly sampleRate = RATE
  readonly capabilities = LIVE_SPHINX_CAPABILITIES
  /** Its partial words are mostly wrong on phone audio (bench:wer): a turn is not judged by them. */
  readonly turnCues = false
  /** The last final's wait for a decoder, ms. */
  queuedMs = 0
  private readonly listeners: ((p: SttPartial) => void)[] = []
  private readonly preroll = new Kept(PREROLL_SAMPLES)
  private current: Utterance | null = null
  /** Pieces of this turn already ended at a silence: their texts join the final. */
  private pieces: { u: Utterance; text: Promise<string> }[] = []
  private lastSpeechAt = 0
  /** The newest utterance: its partials are the ones reported. */
  private latest: Utterance | null = null
  private closed = false

  constructor(
    private readonly pool: DecoderPool,
    private readonly dictionary: PronouncingDictionary,
  ) {}

  /** Its words are often a sound off the caller's ("top" for "stop"): matched on their sounds. */
  soundsLike(text: string, phrases: readonly string[]): boolean {
    return this.dictionary.soundsLike(text, phrases)
  }

  speech(): void {
    this.lastSpeechAt = performance.now()
    if (this.closed || this.current) return
    const u = new Utterance(this.pool, this.preroll.take(), (text) => {
      // Up to its final, unless the next utterance has begun.
      if (this.latest === u && !this.closed) for (const l of this.listeners) l({ text, stable: false, endOfSpeech: false })
    })
    this.current = u
    this.latest = u
  }

  push(pcm: Int16Array): void {
    if (this.closed) return
    if (this.current && performance.now() - this.lastSpeechAt > SEGMENT_SILENCE_MS) this.endPiece()
    if (this.current) this.current.push(pcm)
    else this.preroll.add(pcm)
  }

  finalize(signal?: AbortSignal): Promise<string> {
    if (this.closed) return Promise.reject(new SpeechError('pocketsphinx', 'the session is closed'))
    // Ended even when aborted: its audio must not open the next utterance.
    if (this.current) this.endPiece()
    const pieces = this.pieces
    this.pieces = []
    // No speech since the last final: nothing to decode.
    if (!pieces.length) return signal?.aborted ? Promise.reject(new DOMException('transcription aborted', 'AbortError')) : Promise.resolve('')
    const text = Promise.all(pieces.map((p) => p.text)).then((texts) => texts.filter(Boolean).join(' '))
    return new Promise<string>((resolve, reject) => {
      const abort = () => settle(() => reject(new DOMException('transcription aborted', 'AbortError')))
      const timer = setTimeout(() => settle(() => reject(new SpeechError('pocketsphinx', `no transcript within ${REPLY_TIMEOUT_MS} ms`))), REPLY_TIMEOUT_MS)
      let settled = false
      const settle = (then: () => void) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', abort)
        then()
      }
      text.then(
        (t) =>
          settle(() => {
            this.queuedMs = pieces.reduce((n, p) => n + p.u.queuedMs, 0)
            resolve(t)
          }),
        (err) => settle(() => reject(err)),
      )
      if (signal?.aborted) return abort()
      signal?.addEventListener('abort', abort, { once: true })
    })
  }

  /** The current piece ends (its decoder goes back once its text is out); its text waits for the final. */
  private endPiece(): void {
    const u = this.current!
    this.current = null
    const text = u.finish()
    // Read by the final; a piece nobody finalizes (the call ended) must not be an unhandled rejection.
    text.catch(() => {})
    this.pieces.push({ u, text })
  }

  onPartial(listener: (partial: SttPartial) => void): void {
    this.listeners.push(listener)
  }

  /** Finals already asked for are still answered; the utterance in progress is dropped. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.current?.abandon()
    this.current = null
    this.pieces = []
    this.preroll.take()
  }
}
