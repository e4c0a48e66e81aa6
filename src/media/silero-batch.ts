/**
 * Silero windows of many calls run as one batched inference. One ONNX run per window per call is
 * ~3,000 runs a second at 100 calls, each with its own native round trip and promise; a batch of
 * 64 costs ~4 ms against ~11 ms for 64 single runs (measured here), and one callback instead of
 * 64. Each call keeps only its own recurrent state. A call may send several windows at once (audio
 * that waited while the process was busy): they run in order, each after the one before it, as
 * steps of the same batch, so catching up costs one round trip to the model's thread instead of
 * one a window. The batch runs wherever `run` runs it (vad.ts: on the model's own thread).
 */
/** Largest batch: 64 windows is ~2 s of audio-time across calls and ~4 ms of inference. */
export const MAX_BATCH = 64
/** How long the first window of a batch waits for others: small next to the 32 ms window itself. */
export const BATCH_WAIT_MS = 4
const WINDOW = 512
const STATE = 2 * 128

/**
 * Runs the windows of `counts.length` calls, `counts[i]` of call i, in order (`input`: every
 * window of call 0, then of call 1, …, 512 samples each) from their states (`state`: [2, n, 128],
 * h of every call then c of every call); resolves with a speech probability per window, laid out
 * as `input`, and each call's state after its last window, laid out as `state`. It may take
 * ownership of the arrays (they are transferred to a thread).
 */
export type SileroRun = (counts: Int32Array, input: Float32Array, state: Float32Array) => Promise<{ probs: ArrayLike<number>; state: Float32Array }>

interface Pending {
  /** One or more windows, in order. */
  input: Float32Array
  /** [h(128), c(128)] of the call, updated in place when the batch returns. */
  state: Float32Array
  resolve: (p: number[]) => void
  reject: (e: unknown) => void
}

export class SileroBatcher {
  private queue: Pending[] = []
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(private readonly run: SileroRun) {}

  /** The speech probability of each 512-sample window of `input`, in order; `state` advances in place past the last. */
  infer(input: Float32Array, state: Float32Array): Promise<number[]> {
    if (input.length === 0 || input.length % WINDOW) return Promise.reject(new Error(`Silero takes whole ${WINDOW}-sample windows, not ${input.length} samples`))
    return new Promise((resolve, reject) => {
      this.queue.push({ input, state, resolve, reject })
      if (this.queue.length >= MAX_BATCH) this.flush()
      else this.timer ??= setTimeout(() => this.flush(), BATCH_WAIT_MS)
    })
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const batch = this.queue.splice(0, MAX_BATCH)
    if (this.queue.length) this.timer = setTimeout(() => this.flush(), 0)
    if (!batch.length) return
    const n = batch.length
    const counts = Int32Array.from(batch, (p) => p.input.length / WINDOW)
    const input = new Float32Array(batch.reduce((total, p) => total + p.input.length, 0))
    const state = new Float32Array(n * STATE)
    // The model's state is [2, batch, 128]: h of every call, then c of every call.
    let at = 0
    batch.forEach((p, i) => {
      input.set(p.input, at)
      at += p.input.length
      state.set(p.state.subarray(0, 128), i * 128)
      state.set(p.state.subarray(128), (n + i) * 128)
    })
    this.run(counts, input, state)
      .then(({ probs, state: next }) => {
        let first = 0
        batch.forEach((p, i) => {
          p.state.set(next.subarray(i * 128, (i + 1) * 128), 0)
          p.state.set(next.subarray((n + i) * 128, (n + i + 1) * 128), 128)
          p.resolve(Array.from({ length: counts[i]! }, (_, w) => Number(probs[first + w])))
          first += counts[i]!
        })
      })
      .catch((err) => {
        for (const p of batch) p.reject(err)
      })
  }
}
