/**
 * Local speech-to-text that decodes while the caller speaks: one pocketsphinx decoder per call
 * (Debian's libpocketsphinx through bun:ffi, pocketsphinx-ffi.ts), fed each chunk as it arrives,
 * its changing hypothesis reported through `onPartial`, and `finalize` ending the utterance
 * (`ps_end_utt`, ~2–3 ms) instead of decoding it from the start.
 *
 * Each decoder runs on its own worker thread. Measured here (bench/wer.ts prints it):
 * `ps_process_raw` + `ps_get_hyp` cost p50 2.2–2.7 ms and p95 5.5–10 ms per 20 ms frame, and
 * `ps_init` 200–600 ms and ~95 MB. On the event loop that would be a tenth of a core per speaking
 * caller in slices of up to 10 ms, and a half-second stall per call set up. A worker per call rather than a
 * shared pool: a shared worker would stall every call it holds for the length of another's
 * `ps_init`, and a worker (~12 MB, ~5 ms to start) is small next to the decoder it hosts.
 * A closed call's decoder is kept warm for the next call (IDLE_DECODERS, IDLE_MS) so calls in a
 * row skip `ps_init`; the first call's decoder loads while the greeting plays, its audio queued.
 */
import { DEBIAN_SPHINX, type SphinxPaths, sphinxMissing } from './pocketsphinx-ffi'
import type { FromDecoder, ToDecoder } from './pocketsphinx-worker'
import { SpeechError, type SpeechToText, type SttPartial, type SttSession } from './port'

const RATE = 16_000
/** Warm decoders kept after their call: each holds ~95 MB, so one — enough for calls in a row. */
const IDLE_DECODERS = 1
/** A warm decoder's memory is returned after a minute with no call to take it. */
const IDLE_MS = 60_000
/**
 * The worker answers in order, so a reply waits for the audio queued before it: at most ps_init
 * (≤ 0.5 s) plus a backlog decoded at ~0.1× real time. Thirty seconds means the thread is stuck.
 */
const REPLY_TIMEOUT_MS = 30_000

type Ack = 'parked' | 'freed'

/** A worker that hosts one decoder, handed from call to call. */
class DecoderThread {
  private readonly worker: Worker
  /** Receives the decoder's partials, finals and errors: the session that holds it. */
  owner: ((m: FromDecoder) => void) | null = null
  failed: string | null = null
  private waiting: { ack: Ack; done: () => void } | null = null

  constructor(paths: SphinxPaths) {
    this.worker = new Worker(new URL('./pocketsphinx-worker.ts', import.meta.url).href, { smol: true })
    this.worker.onmessage = (e: MessageEvent<FromDecoder>) => this.dispatch(e.data)
    this.worker.onerror = (e) => this.dispatch({ t: 'error', message: `the decoder thread failed: ${e.message}` })
    this.post({ t: 'init', paths })
  }

  post(m: ToDecoder): void {
    this.worker.postMessage(m)
  }

  /** Sends `m` and waits (bounded) for the worker's acknowledgement. */
  request(m: ToDecoder, ack: Ack): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null
        resolve(false)
      }, REPLY_TIMEOUT_MS)
      this.waiting = {
        ack,
        done: () => {
          clearTimeout(timer)
          resolve(true)
        },
      }
      this.post(m)
    })
  }

  /** Whether the process may exit while this thread lives: a call's decoder holds it, a warm one does not. */
  hold(yes: boolean): void {
    // Bun's Worker has ref/unref; the DOM typings the project also loads do not declare them.
    const w = this.worker as unknown as { ref(): void; unref(): void }
    if (yes) w.ref()
    else w.unref()
  }

  terminate(): void {
    this.worker.terminate()
  }

  private dispatch(m: FromDecoder): void {
    if (m.t === 'error') this.failed = m.message
    if ((m.t === 'parked' || m.t === 'freed') && this.waiting?.ack === m.t) {
      const w = this.waiting
      this.waiting = null
      w.done()
      return
    }
    this.owner?.(m)
  }
}

export interface LiveSphinxOptions {
  paths?: SphinxPaths
  /** Warm decoders kept after their call (default IDLE_DECODERS). */
  idleDecoders?: number
}

export class PocketsphinxLiveStt implements SpeechToText {
  readonly name = 'pocketsphinx'
  private readonly paths: SphinxPaths
  private readonly maxIdle: number
  private readonly idle: { thread: DecoderThread; timer: ReturnType<typeof setTimeout> }[] = []
  private alive = 0

  constructor(options: LiveSphinxOptions = {}) {
    this.paths = options.paths ?? DEBIAN_SPHINX
    this.maxIdle = options.idleDecoders ?? IDLE_DECODERS
  }

  /** Decoders not yet freed (in a call or warm), and the warm ones among them. */
  get decoders(): { alive: number; idle: number } {
    return { alive: this.alive, idle: this.idle.length }
  }

  async open(): Promise<SttSession> {
    const missing = sphinxMissing(this.paths)
    if (missing) throw new SpeechError('pocketsphinx', missing)
    const warm = this.idle.pop()
    if (warm) clearTimeout(warm.timer)
    const thread = warm?.thread ?? this.spawn()
    return new LiveSession(thread, (t) => this.release(t))
  }

  private spawn(): DecoderThread {
    this.alive++
    return new DecoderThread(this.paths)
  }

  /** The call ended: keep its decoder warm (its utterance dropped) or free it. */
  private async release(thread: DecoderThread): Promise<void> {
    const room = () => !thread.failed && this.idle.length < this.maxIdle
    if (room() && (await thread.request({ t: 'reset' }, 'parked')) && room()) {
      thread.owner = null
      thread.hold(false)
      const entry = { thread, timer: setTimeout(() => this.expire(entry), IDLE_MS) }
      entry.timer.unref?.()
      this.idle.push(entry)
      return
    }
    await this.free(thread)
  }

  private expire(entry: { thread: DecoderThread }): void {
    const at = this.idle.indexOf(entry as (typeof this.idle)[number])
    if (at < 0) return
    this.idle.splice(at, 1)
    void this.free(entry.thread)
  }

  private async free(thread: DecoderThread): Promise<void> {
    await thread.request({ t: 'close' }, 'freed')
    thread.owner = null
    thread.terminate()
    this.alive--
  }
}

class LiveSession implements SttSession {
  readonly sampleRate = RATE
  /** Its partial words are mostly wrong on phone audio (bench:wer): a turn is not judged by them. */
  readonly turnCues = false
  private readonly listeners: ((p: SttPartial) => void)[] = []
  private readonly pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>()
  private next = 0
  private closing: Promise<void> | null = null

  constructor(
    private readonly thread: DecoderThread,
    private readonly release: (thread: DecoderThread) => Promise<void>,
  ) {
    thread.owner = (m) => this.message(m)
    thread.hold(true)
  }

  push(pcm: Int16Array): void {
    if (this.closing || this.thread.failed) return
    this.thread.post({ t: 'audio', pcm })
  }

  finalize(signal?: AbortSignal): Promise<string> {
    if (this.closing) return Promise.reject(new SpeechError('pocketsphinx', 'the session is closed'))
    if (this.thread.failed) return Promise.reject(new SpeechError('pocketsphinx', this.thread.failed))
    const id = ++this.next
    // Posted even when aborted: the utterance must still end here, or its audio would open the next one.
    this.thread.post({ t: 'finalize', id })
    return new Promise<string>((resolve, reject) => {
      const abort = () => settle(() => reject(new DOMException('transcription aborted', 'AbortError')))
      const timer = setTimeout(() => settle(() => reject(new SpeechError('pocketsphinx', `no transcript within ${REPLY_TIMEOUT_MS} ms`))), REPLY_TIMEOUT_MS)
      const settle = (then: () => void) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', abort)
        this.pending.delete(id)
        then()
      }
      this.pending.set(id, { resolve: (text) => settle(() => resolve(text)), reject: (err) => settle(() => reject(err)) })
      if (signal?.aborted) return abort()
      signal?.addEventListener('abort', abort, { once: true })
    })
  }

  onPartial(listener: (partial: SttPartial) => void): void {
    this.listeners.push(listener)
  }

  close(): Promise<void> {
    // Finalizes already sent are answered before the decoder is parked or freed (the worker keeps order).
    this.closing ??= this.release(this.thread).then(() => {
      for (const p of this.pending.values()) p.reject(new SpeechError('pocketsphinx', 'the session closed before its transcript'))
    })
    return this.closing
  }

  private message(m: FromDecoder): void {
    if (m.t === 'partial') {
      if (this.closing) return
      for (const l of this.listeners) l({ text: m.text, stable: false, endOfSpeech: false })
    } else if (m.t === 'final') {
      this.pending.get(m.id)?.resolve(m.text)
    } else if (m.t === 'error') {
      for (const p of this.pending.values()) p.reject(new SpeechError('pocketsphinx', m.message))
    }
  }
}
