/**
 * A few espeak-ng synthesisers shared by every call of the process, in place of a process per
 * sentence: starting `espeak-ng` costs ~45 ms of CPU whatever it says, the library ~2–3 ms a
 * sentence (bench/espeak.ts). A sentence blocks its thread while it is spoken (the library is
 * synchronous), so each synthesiser has a thread of its own, off the event loop, and sentences
 * wait their turn in a FIFO when all are busy. The queue is not bounded here: each call asks for
 * at most the sentence or two its speech queue reads ahead, so it is bounded by the live calls,
 * which admission bounds.
 *
 * A thread that dies takes its sentence with it (the caller's synthesis fails, as a vendor's would)
 * and is started again on the next need. A library that does not load or initialise makes the pool
 * `unavailable`, and EspeakTts goes back to the program.
 */

import { keepAlive } from '../worker-ref'
import type { FromSynth, ToSynth } from './espeak-worker'

export interface SynthJob {
  text: string
  voice: string
  wpm: number
  audio(pcm: Int16Array): void
  done(): void
  failed(err: Error): void
}

/** The synthesisers could not start: the caller may use the program instead. */
export class SynthUnavailable extends Error {
  override readonly name = 'SynthUnavailable'
}

export interface SynthStats {
  size: number
  started: number
  busy: number
  queued: number
  /** Sentences spoken, and the time their threads spent on them (ms). */
  spoken: number
  speakingMs: number
}

/** The OS thread's name (Bun sets it from the worker's name): how `top -H` and bench:soak tell the threads apart. */
export const THREAD_NAME = 'espeak-synth'

class SynthThread {
  readonly worker: Worker
  job: { id: number; job: SynthJob } | null = null
  dead = false

  constructor(library: string | undefined, onMessage: (t: SynthThread, m: FromSynth) => void, onDeath: (t: SynthThread, reason: string) => void) {
    this.worker = new Worker(new URL('./espeak-worker.ts', import.meta.url).href, { smol: true, name: THREAD_NAME })
    this.worker.onmessage = (e: MessageEvent<FromSynth>) => onMessage(this, e.data)
    // An uncaught error is followed by `close`, which reports the death once.
    this.worker.onerror = () => {}
    this.worker.addEventListener('close', () => {
      if (!this.dead) onDeath(this, 'the synthesiser thread exited')
    })
    this.post({ t: 'init', library })
    this.hold(false)
  }

  post(m: ToSynth): void {
    this.worker.postMessage(m)
  }

  /** A thread speaking keeps the process alive; an idle one does not. */
  hold(yes: boolean): void {
    keepAlive(this.worker, yes)
  }

  /** Ends the thread at once, as a crash would (the pool hears of it and replaces it). */
  kill(): void {
    this.worker.terminate()
  }

  /** Ends the thread for the pool: no death to report. */
  stop(): void {
    this.dead = true
    this.worker.terminate()
  }
}

export class EspeakPool {
  private readonly threads = new Set<SynthThread>()
  private readonly idle: SynthThread[] = []
  private readonly waiting: { id: number; job: SynthJob }[] = []
  private seq = 0
  private spoken = 0
  private speakingMs = 0
  private closed = false
  /** Why the library cannot be used, once a thread has said so. */
  unavailable: string | null = null

  /** One thread starts at once (~10 ms to load the library's data), so the first sentence does not wait for it. */
  constructor(private readonly options: { size: number; library?: string }) {
    this.idle.push(this.spawn())
  }

  /** Speaks `job` on the next free synthesiser; returns a cancel (the sentence is dropped, waiting or not). */
  speak(job: SynthJob): () => void {
    if (this.unavailable || this.closed) {
      job.failed(this.unavailable ? new SynthUnavailable(this.unavailable) : new Error('the synthesisers were shut down'))
      return () => {}
    }
    const entry = { id: ++this.seq, job }
    const thread = this.idle.pop() ?? (this.threads.size < this.options.size ? this.spawn() : null)
    if (thread) this.run(thread, entry)
    else this.waiting.push(entry)
    return () => {
      const at = this.waiting.indexOf(entry)
      if (at >= 0) this.waiting.splice(at, 1)
      // A sentence being spoken finishes in milliseconds; what it still sends is dropped.
      for (const t of this.threads) if (t.job === entry) t.job = { id: entry.id, job: DROPPED }
    }
  }

  stats(): SynthStats {
    return {
      size: this.options.size,
      started: this.threads.size,
      busy: this.threads.size - this.idle.length,
      queued: this.waiting.length,
      spoken: this.spoken,
      speakingMs: Math.round(this.speakingMs),
    }
  }

  /** The live threads (the replacement test kills one). */
  get synthesizers(): readonly { kill(): void }[] {
    return [...this.threads]
  }

  close(): void {
    this.closed = true
    for (const w of this.waiting.splice(0)) w.job.failed(new Error('the synthesisers were shut down'))
    for (const t of this.threads) {
      t.job?.job.failed(new Error('the synthesisers were shut down'))
      t.stop()
    }
    this.threads.clear()
    this.idle.length = 0
  }

  private spawn(): SynthThread {
    const thread = new SynthThread(
      this.options.library,
      (t, m) => this.message(t, m),
      (t, reason) => this.died(t, reason),
    )
    this.threads.add(thread)
    return thread
  }

  private run(thread: SynthThread, entry: { id: number; job: SynthJob }): void {
    thread.job = entry
    thread.hold(true)
    const { text, voice, wpm } = entry.job
    thread.post({ t: 'speak', id: entry.id, text, voice, wpm })
  }

  /** A free thread: the longest-waiting sentence, else idle. */
  private free(thread: SynthThread): void {
    thread.job = null
    const next = this.waiting.shift()
    if (next) return void this.run(thread, next)
    thread.hold(false)
    this.idle.push(thread)
  }

  private message(thread: SynthThread, m: FromSynth): void {
    if (m.t === 'error') return void this.fail(m.message)
    if (m.t === 'ready' || m.t === 'closed') return
    const current = thread.job
    if (!current || current.id !== m.id) return
    if (m.t === 'audio') return void current.job.audio(m.pcm)
    if (m.t === 'done') {
      this.spoken++
      this.speakingMs += m.ms
      current.job.done()
    } else current.job.failed(new Error(`espeak-ng: ${m.message}`))
    this.free(thread)
  }

  /** The library cannot be used: every sentence, now and later, goes to the program. */
  private fail(reason: string): void {
    this.unavailable = reason
    const jobs = [...[...this.threads].flatMap((t) => (t.job ? [t.job.job] : [])), ...this.waiting.splice(0).map((w) => w.job)]
    for (const t of this.threads) t.stop()
    this.threads.clear()
    this.idle.length = 0
    for (const job of jobs) job.failed(new SynthUnavailable(reason))
  }

  private died(thread: SynthThread, reason: string): void {
    if (!this.threads.has(thread)) return
    thread.dead = true
    this.threads.delete(thread)
    const at = this.idle.indexOf(thread)
    if (at >= 0) this.idle.splice(at, 1)
    const job = thread.job
    thread.job = null
    job?.job.failed(new Error(reason))
    // A replacement starts now when sentences wait for it; otherwise on the next need.
    const next = this.waiting.shift()
    if (next && !this.closed) this.run(this.spawn(), next)
  }
}

const DROPPED: SynthJob = { text: '', voice: '', wpm: 0, audio() {}, done() {}, failed() {} }
