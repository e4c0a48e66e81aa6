/**
 * Silero windows of many calls run as one batched inference. One ONNX run per window per call is
 * ~3,000 runs a second at 100 calls, each with its own native round trip and promise; a batch of
 * 64 costs ~4 ms against ~11 ms for 64 single runs (measured here), and one callback instead of
 * 64. Each call keeps only its own recurrent state; a call contributes at most one window to a
 * batch (its next window needs this one's state). The batch runs wherever `run` runs it (vad.ts:
 * on the model's own thread).
 */
/** Largest batch: 64 windows is ~2 s of audio-time across calls and ~4 ms of inference. */
export const MAX_BATCH = 64
/** How long the first window of a batch waits for others: small next to the 32 ms window itself. */
export const BATCH_WAIT_MS = 4
const WINDOW = 512
const STATE = 2 * 128

/**
 * Runs `n` windows (`input`: n × 512 samples) from their states (`state`: [2, n, 128], h of every
 * window then c of every window); resolves with n speech probabilities and the next states, laid
 * out the same way. It may take ownership of both arrays (they are transferred to a thread).
 */
export type SileroRun = (n: number, input: Float32Array, state: Float32Array) => Promise<{ probs: ArrayLike<number>; state: Float32Array }>

interface Pending {
  input: Float32Array
  /** [h(128), c(128)] of the call, updated in place when the batch returns. */
  state: Float32Array
  resolve: (p: number) => void
  reject: (e: unknown) => void
}

export class SileroBatcher {
  private queue: Pending[] = []
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(private readonly run: SileroRun) {}

  /** The speech probability of one 512-sample window; `state` advances in place. */
  infer(input: Float32Array, state: Float32Array): Promise<number> {
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
    const input = new Float32Array(n * WINDOW)
    const state = new Float32Array(n * STATE)
    // The model's state is [2, batch, 128]: h of every call, then c of every call.
    batch.forEach((p, i) => {
      input.set(p.input, i * WINDOW)
      state.set(p.state.subarray(0, 128), i * 128)
      state.set(p.state.subarray(128), (n + i) * 128)
    })
    this.run(n, input, state)
      .then(({ probs, state: next }) => {
        batch.forEach((p, i) => {
          p.state.set(next.subarray(i * 128, (i + 1) * 128), 0)
          p.state.set(next.subarray((n + i) * 128, (n + i + 1) * 128), 128)
          p.resolve(Number(probs[i]))
        })
      })
      .catch((err) => {
        for (const p of batch) p.reject(err)
      })
  }
}
