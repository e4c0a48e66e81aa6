/**
 * Silero windows of many calls run as one batched inference. One ONNX run per window per call is
 * ~3,000 runs a second at 100 calls, each with its own native round trip and promise; a batch of
 * 64 costs ~4 ms against ~11 ms for 64 single runs (measured here), and one callback instead of
 * 64. Each call keeps only its own recurrent state. A call may send several windows at once (audio
 * that waited while the process was busy): they run in order, each after the one before it, as
 * steps of the same batch, so catching up costs one round trip to the model's thread instead of
 * one a window. The batch runs wherever `run` runs it (vad.ts: on the model's own thread).
 * Each window goes with the samples before it (CONTEXT), and a call's state starts again after a
 * second of quiet (RESET_AFTER_QUIET_WINDOWS), decided window by window where the model runs so
 * the same audio gives the same decisions however it was grouped.
 */
import { type Cancel, type Clock, systemClock } from '../clock'

/** Largest batch: 64 windows is ~2 s of audio-time across calls and ~4 ms of inference. */
export const MAX_BATCH = 64
/** How long the first window of a batch waits for others: small next to the 32 ms window itself. */
export const BATCH_WAIT_MS = 4
/** The v5 model's window at 16 kHz: 512 samples = 32 ms (the size it was trained on). */
export const WINDOW = 512
/**
 * The v5 model is given the last 64 samples of the window before each window (its authors'
 * wrapper and Pipecat's feed it 576 samples at 16 kHz); without them it hears less speech.
 */
export const CONTEXT = 64
/** What the model is given for one window: its context, then the window. */
export const INPUT = CONTEXT + WINDOW
/** Below this a window is plainly not speech: Silero's own end-of-speech threshold (vad.ts). */
export const QUIET_BELOW = 0.35
/**
 * After this many windows in a row with no speech (~1 s) a call's recurrent state starts again.
 * The state drifts without bound while nothing is said (its largest value grows ~30 a second of
 * silence or line noise) and the model then hears less and less of the next speech: a probe with
 * espeak-ng's "Thank you." after 10–60 s of a call heard 17 of its windows fresh, 13 without a
 * reset, 17 with one after every second of quiet and 15 with one every 5 s (Pipecat's interval;
 * docs/benchmarks.md, "Silero's state on long calls"). A fresh state hears an onset as well.
 */
export const RESET_AFTER_QUIET_WINDOWS = 31
/** A call's state as the batch carries it: Silero's h (128 floats), c (128), then its windows of quiet so far. */
export const STATE = 2 * 128 + 1

/**
 * Runs the windows of `counts.length` calls, `counts[i]` of call i, in order (`input`: every
 * window of call 0, then of call 1, …, INPUT samples each) from their states (`state`: [2, n, 128],
 * h of every call then c of every call; `quiet`: each call's windows of quiet so far); resolves
 * with a speech probability per window, laid out as `input`, and each call's state and quiet
 * count after its last window, laid out as given. It may take ownership of the arrays (they are
 * transferred to a thread).
 */
export type SileroRun = (counts: Int32Array, input: Float32Array, state: Float32Array, quiet: Float32Array) => Promise<{ probs: ArrayLike<number>; state: Float32Array; quiet: Float32Array }>

interface Pending {
  /** One or more windows, in order. */
  input: Float32Array
  /** [h(128), c(128), windows of quiet] of the call (STATE floats), updated in place when the batch returns. */
  state: Float32Array
  resolve: (p: number[]) => void
  reject: (e: unknown) => void
}

export class SileroBatcher {
  private queue: Pending[] = []
  private stopWait: Cancel | null = null

  constructor(
    private readonly run: SileroRun,
    private readonly clock: Pick<Clock, 'after'> = systemClock,
  ) {}

  /** The speech probability of each INPUT-sample window of `input`, in order; `state` (STATE floats) advances in place past the last. */
  infer(input: Float32Array, state: Float32Array): Promise<number[]> {
    if (input.length === 0 || input.length % INPUT) return Promise.reject(new Error(`Silero takes whole ${INPUT}-sample inputs, not ${input.length} samples`))
    return new Promise((resolve, reject) => {
      this.queue.push({ input, state, resolve, reject })
      if (this.queue.length >= MAX_BATCH) this.flush()
      else this.stopWait ??= this.clock.after(BATCH_WAIT_MS, () => this.flush())
    })
  }

  private flush(): void {
    this.stopWait?.()
    this.stopWait = null
    const batch = this.queue.splice(0, MAX_BATCH)
    if (this.queue.length) this.stopWait = this.clock.after(0, () => this.flush())
    if (!batch.length) return
    const n = batch.length
    const counts = Int32Array.from(batch, (p) => p.input.length / INPUT)
    const input = new Float32Array(batch.reduce((total, p) => total + p.input.length, 0))
    const state = new Float32Array(n * 2 * 128)
    const quiet = Float32Array.from(batch, (p) => p.state[256]!)
    // The model's state is [2, batch, 128]: h of every call, then c of every call.
    let at = 0
    batch.forEach((p, i) => {
      input.set(p.input, at)
      at += p.input.length
      state.set(p.state.subarray(0, 128), i * 128)
      state.set(p.state.subarray(128, 256), (n + i) * 128)
    })
    this.run(counts, input, state, quiet)
      .then(({ probs, state: next, quiet: after }) => {
        let first = 0
        batch.forEach((p, i) => {
          p.state.set(next.subarray(i * 128, (i + 1) * 128), 0)
          p.state.set(next.subarray((n + i) * 128, (n + i + 1) * 128), 128)
          p.state[256] = after[i]!
          p.resolve(Array.from({ length: counts[i]! }, (_, w) => Number(probs[first + w])))
          first += counts[i]!
        })
      })
      .catch((err) => {
        for (const p of batch) p.reject(err)
      })
  }
}
