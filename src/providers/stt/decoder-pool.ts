/**
 * A small pool of live pocketsphinx decoders shared by every call of the process. A caller speaks
 * perhaps a third of a call, and a decoder costs ~95 MB and 200–600 ms of `ps_init` (bench/wer.ts),
 * so a decoder is held for one utterance — taken when the VAD hears speech, given back when the
 * utterance is final — not for a call. Each decoder runs on its own worker thread: its C calls
 * (1.3–2.2 ms per 20 ms frame, `ps_end_utt` 7–15 ms) would otherwise stall the event loop, and one
 * thread per decoder keeps a `ps_init` from stalling the others. The model loads once per decoder.
 *
 * When every decoder is held, an utterance waits in a bounded FIFO (its holder keeps the audio);
 * past the bound it is refused. A decoder whose thread dies or whose library call fails is
 * dropped and a new one started; its holder is told and may take another and replay its audio.
 */

import { keepAlive } from '../worker-ref'
import type { SphinxPaths } from './pocketsphinx-ffi'
import type { FromDecoder, ToDecoder } from './pocketsphinx-worker'

export interface DecoderHolder {
  /** A decoder is this holder's until it gives the lease back; `waitedMs` in the queue (0 when one was free). */
  granted(lease: Lease, waitedMs: number): void
  /** A partial or final of this lease's audio. */
  heard(m: Extract<FromDecoder, { t: 'partial' } | { t: 'final' }>): void
  /** The decoder died with this lease (or the pool closed while it waited): nothing more comes from it. */
  lost(reason: string): void
}

export interface PoolStats {
  /** Decoders the pool may run. */
  size: number
  /** Started and alive (loading their model, held or idle). */
  started: number
  busy: number
  idle: number
  /** Utterances waiting for a decoder. */
  queued: number
  /** The oldest waiting utterance's wait so far, ms (0 with none waiting). */
  oldestWaitMs: number
  refused: number
  replaced: number
}

export interface PoolOptions {
  paths: SphinxPaths
  size: number
  /** Utterances that may wait for a decoder; past that an utterance is refused. */
  queue: number
  /** Each grant's wait in the queue (ms), for the metrics. */
  onWait?: (ms: number) => void
  now?: () => number
}

/** One lease of one decoder: the audio of one utterance goes through it. */
export class Lease {
  constructor(
    readonly id: number,
    private readonly thread: DecoderThread,
  ) {}

  /** Still the holder's: not given back and the decoder alive. */
  get valid(): boolean {
    return this.thread.lease === this.id && !this.thread.dead
  }

  audio(pcm: Int16Array): void {
    if (this.valid) this.thread.post({ t: 'audio', lease: this.id, pcm })
  }

  /** Ends the utterance; its `final` follows, after every audio sent before. */
  finalize(): void {
    if (this.valid) this.thread.post({ t: 'finalize', lease: this.id })
  }

  /** For the pool: the thread behind this lease. */
  get decoder(): DecoderThread {
    return this.thread
  }
}

/** The OS thread's name (Bun sets it from the worker's name): how `top -H` and bench:soak tell the threads apart. */
export const THREAD_NAME = 'stt-decoder'

export class DecoderThread {
  private readonly worker: Worker
  lease = 0
  holder: DecoderHolder | null = null
  dead = false
  private closing: (() => void) | null = null

  constructor(paths: SphinxPaths, onMessage: (t: DecoderThread, m: FromDecoder) => void, onDeath: (t: DecoderThread, reason: string) => void) {
    this.worker = new Worker(new URL('./pocketsphinx-worker.ts', import.meta.url).href, { smol: true, name: THREAD_NAME })
    this.worker.onmessage = (e: MessageEvent<FromDecoder>) => {
      if (e.data.t === 'freed') return this.closing?.()
      onMessage(this, e.data)
    }
    // An uncaught error is followed by `close`, which reports the death once.
    this.worker.onerror = () => {}
    this.worker.addEventListener('close', (e) => {
      if (this.closing || this.dead) return
      // Bun's close event carries the thread's exit code; the DOM typings call it a plain Event.
      onDeath(this, `the decoder thread exited (code ${(e as unknown as { code?: number }).code ?? '?'})`)
    })
    this.post({ t: 'init', paths })
  }

  post(m: ToDecoder): void {
    this.worker.postMessage(m)
  }

  /** Whether the process may exit while this thread lives: a held decoder keeps it, an idle one does not. */
  hold(yes: boolean): void {
    keepAlive(this.worker, yes)
  }

  /** Kills the thread at once (a dead or a failed decoder; an operator's test of replacement). */
  kill(): void {
    this.worker.terminate()
  }

  /** Frees the decoder's memory (`ps_free`), then ends the thread; bounded, as the thread may be stuck. */
  async close(): Promise<void> {
    if (this.dead) return
    this.dead = true
    await new Promise<void>((resolve) => {
      // A thread busy loading its model answers after `ps_init` (≤ 0.6 s); 5 s means it is stuck.
      const timer = setTimeout(resolve, 5_000)
      timer.unref?.()
      this.closing = () => {
        clearTimeout(timer)
        resolve()
      }
      this.post({ t: 'close' })
    })
    this.closing ??= () => {}
    this.worker.terminate()
  }
}

export class DecoderPool {
  private readonly threads = new Set<DecoderThread>()
  private readonly idle: DecoderThread[] = []
  private readonly waiting: { holder: DecoderHolder; since: number }[] = []
  private seq = 0
  private refused = 0
  private replaced = 0
  private closed = false
  private readonly now: () => number

  constructor(private readonly options: PoolOptions) {
    this.now = options.now ?? (() => performance.now())
  }

  /**
   * A decoder for `holder`'s utterance: granted now (an idle one, or a new one while the pool is
   * below its size), queued, or refused when the queue is full. `front`: a holder whose decoder
   * died goes first, so its caller does not wait twice.
   */
  take(holder: DecoderHolder, front = false): 'granted' | 'queued' | 'refused' {
    if (this.closed) return 'refused'
    const thread = this.idle.pop() ?? (this.threads.size < this.options.size ? this.spawn() : null)
    if (thread) {
      this.grant(thread, holder, 0)
      return 'granted'
    }
    if (!front && this.waiting.length >= this.options.queue) {
      this.refused++
      return 'refused'
    }
    const entry = { holder, since: this.now() }
    if (front) this.waiting.unshift(entry)
    else this.waiting.push(entry)
    return 'queued'
  }

  /**
   * A call opened: one idle decoder is kept loading or loaded ahead of need (while the pool is
   * below its size), so an utterance does not wait for a model load (200–600 ms) — the first call's
   * decoder loads while its greeting plays.
   */
  spare(): void {
    if (this.closed || this.idle.length || this.waiting.length || this.threads.size >= this.options.size) return
    const thread = this.spawn()
    thread.hold(false)
    this.idle.push(thread)
  }

  /** The holder no longer wants a decoder (its call ended while it waited). */
  cancel(holder: DecoderHolder): void {
    const at = this.waiting.findIndex((w) => w.holder === holder)
    if (at >= 0) this.waiting.splice(at, 1)
  }

  /** The utterance is over (or abandoned): the decoder drops what is left of it and goes to the next waiting holder. */
  give(lease: Lease): void {
    const thread = lease.decoder
    if (thread.lease !== lease.id || thread.dead) return
    thread.post({ t: 'reset' })
    thread.lease = 0
    thread.holder = null
    this.assign(thread)
  }

  stats(): PoolStats {
    const idle = this.idle.length
    return {
      size: this.options.size,
      started: this.threads.size,
      busy: this.threads.size - idle,
      idle,
      queued: this.waiting.length,
      oldestWaitMs: this.waiting.length ? Math.round(this.now() - this.waiting[0]!.since) : 0,
      refused: this.refused,
      replaced: this.replaced,
    }
  }

  /** The live decoder threads (operators' diagnostics and the replacement test). */
  get decoders(): readonly DecoderThread[] {
    return [...this.threads]
  }

  /** Frees every decoder; waiting holders are told. */
  async close(): Promise<void> {
    this.closed = true
    for (const w of this.waiting.splice(0)) w.holder.lost('the speech decoders were shut down')
    const all = [...this.threads]
    this.threads.clear()
    this.idle.length = 0
    await Promise.all(all.map((t) => t.close()))
  }

  private spawn(): DecoderThread {
    const thread = new DecoderThread(
      this.options.paths,
      (t, m) => this.message(t, m),
      (t, reason) => this.died(t, reason),
    )
    this.threads.add(thread)
    return thread
  }

  private grant(thread: DecoderThread, holder: DecoderHolder, waitedMs: number): void {
    thread.lease = ++this.seq
    thread.holder = holder
    thread.hold(true)
    this.options.onWait?.(waitedMs)
    holder.granted(new Lease(thread.lease, thread), waitedMs)
  }

  /** A free decoder: to the longest-waiting holder, else idle. */
  private assign(thread: DecoderThread): void {
    const next = this.waiting.shift()
    if (next) return void this.grant(thread, next.holder, Math.round(this.now() - next.since))
    thread.hold(false)
    this.idle.push(thread)
  }

  private message(thread: DecoderThread, m: FromDecoder): void {
    if (m.t === 'error') return void this.died(thread, `the decoder failed: ${m.message}`)
    if ((m.t === 'partial' || m.t === 'final') && m.lease === thread.lease) thread.holder?.heard(m)
  }

  private died(thread: DecoderThread, reason: string): void {
    if (!this.threads.has(thread)) return
    this.threads.delete(thread)
    const at = this.idle.indexOf(thread)
    if (at >= 0) this.idle.splice(at, 1)
    const holder = thread.holder
    thread.holder = null
    thread.lease = 0
    void thread.close()
    this.replaced++
    // A replacement starts now when someone waits for it; otherwise on the next take.
    if (this.waiting.length && !this.closed) this.assign(this.spawn())
    holder?.lost(reason)
  }
}
