/**
 * Audio on the wire ⇄ the pipeline's samples. The pipeline works in 16-bit PCM; the phone line
 * carries G.711 mu-law at 8 kHz (Twilio Media Streams) and browsers send 16-bit PCM (L16).
 * mu-law comes from `alawmulaw`; rate changes are written here (see `resample`).
 */
import { mulaw } from 'alawmulaw'

/** The phone line's rate: G.711 is 8 kHz. */
export const PHONE_RATE = 8_000

export type WireEncoding = 'audio/x-mulaw' | 'audio/l16'

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return mulaw.decode(bytes)
}

export function encodeMulaw(pcm: Int16Array): Uint8Array {
  return mulaw.encode(pcm)
}

/** 16-bit little-endian bytes (L16 from browsers, vendors' `pcm` formats) as samples. */
export function fromLittleEndian(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.byteLength >> 1)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true)
  return out
}

export function toLittleEndian(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true)
  return out
}

/**
 * Changes the rate of one chunk. Upsampling (the line's 8 kHz to an STT's or the VAD's 16 kHz)
 * interpolates linearly and needs no filter; downsampling (a TTS's 16–24 kHz to the line) low-pass
 * filters first so the voice does not alias. Chunks are resampled alone (the edge sample is held
 * past either end): at the 20–100 ms chunks of this pipeline the seam is one sample, inaudible on
 * a phone line.
 *
 * Written out rather than taken from `wave-resampler`: its downsampling runs a 16-stage Butterworth
 * filter forward and backward over every input sample through object fields (~165 ns a sample
 * here), so one 17 s espeak-ng reply at 22,050 Hz cost ~60 ms of the event loop, and 20 calls a
 * second starting to talk starved the playout of every other call (bench:soak). The windowed-sinc
 * filter below is evaluated only at the output samples: ~10 ns an input sample, ~16× less.
 */
export function resample(pcm: Int16Array, from: number, to: number): Int16Array {
  if (from === to || pcm.length === 0) return pcm
  return to > from ? upsample(pcm, from, to) : downsample(pcm, from, to)
}

function upsample(pcm: Int16Array, from: number, to: number): Int16Array {
  const n = pcm.length
  const out = new Int16Array(Math.floor((n * to) / from))
  // The chunk's n - 1 intervals spread over its output (as `wave-resampler` did): no sample is held
  // flat at the chunk's end, a step every 20 ms frame (50 a second). With that step Silero missed
  // the sandbox callee's wordless noise (test/e2e/voice.test.ts); without it, it hears it.
  const step = (n - 1) / out.length
  for (let j = 0; j < out.length; j++) {
    const t = j * step
    const i = Math.floor(t)
    const a = pcm[i]!
    out[j] = i + 1 < n ? Math.round(a + (pcm[i + 1]! - a) * (t - i)) : a
  }
  return out
}

/**
 * The low-pass: cutoff (its -6 dB point) at 95% of the new Nyquist frequency, 8 sinc lobes either
 * side, Kaiser window β = 5. Measured at 22,050 → 8,000 Hz: flat to 3 kHz, -1.1 dB at 3.4 kHz
 * (the top of a phone channel), and what would fold back into 0–3.4 kHz (4.6 kHz and up) down by
 * 57 dB or more, with 48 taps an output sample.
 */
const CUTOFF = 0.95
const ZERO_CROSSINGS = 8
const KAISER_BETA = 5

/**
 * A polyphase low-pass for one pair of rates. The rates are whole numbers, so output sample j sits
 * at input position j·M/L (M = from/g, L = to/g, g their greatest common divisor): there are only
 * L distinct fractional positions (160 at 22,050 → 8,000, 1 at 16,000 → 8,000), and each gets its
 * own row of weights, computed once and normalised to unity gain. An output sample is then one dot
 * product, with no kernel evaluated on the way.
 */
interface Kernel {
  phases: number
  step: number
  taps: number
  /** Row p: the taps' weights for fractional position p/phases, first tap `taps/2 - 1` samples before. */
  weights: Float64Array
}
const kernels = new Map<number, Kernel>()

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

function kernelFor(from: number, to: number): Kernel {
  const key = from * 1_000_000 + to
  let kernel = kernels.get(key)
  if (!kernel) {
    const g = gcd(from, to)
    const phases = to / g
    const step = from / g
    const fc = (CUTOFF * to) / 2 / from // cycles per input sample
    const half = ZERO_CROSSINGS / (2 * fc) // the kernel's reach either side, in input samples
    const reach = Math.ceil(half)
    const taps = 2 * reach
    const weights = new Float64Array(phases * taps)
    for (let p = 0; p < phases; p++) {
      let sum = 0
      for (let k = 0; k < taps; k++) {
        // Tap k is input sample base - reach + 1 + k; the output sits at base + p/phases.
        const x = Math.abs(p / phases + reach - 1 - k)
        if (x >= half) continue
        const arg = 2 * Math.PI * fc * x
        const sinc = x === 0 ? 1 : Math.sin(arg) / arg
        const r = x / half
        const w = sinc * (besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / besselI0(KAISER_BETA))
        weights[p * taps + k] = w
        sum += w
      }
      for (let k = 0; k < taps; k++) weights[p * taps + k]! /= sum
    }
    kernel = { phases, step, taps, weights }
    kernels.set(key, kernel)
  }
  return kernel
}

/** The modified Bessel function of the first kind, order 0 (the Kaiser window's shape), by its series. */
function besselI0(x: number): number {
  let sum = 1
  let term = 1
  for (let k = 1; k < 30; k++) {
    term *= (x / (2 * k)) ** 2
    sum += term
  }
  return sum
}

function downsample(pcm: Int16Array, from: number, to: number): Int16Array {
  const kernel = kernelFor(from, to)
  // Read as int32 (`| 0`): JavaScriptCore then keeps the loops below in integer arithmetic; as
  // plain reads of the cached object they ran 2.3× slower (measured here).
  const phases = kernel.phases | 0
  const step = kernel.step | 0
  const taps = kernel.taps | 0
  const weights = kernel.weights
  const n = pcm.length
  const out = new Int16Array(Math.floor((n * to) / from))
  // The input as doubles, its edge samples repeated `before` / `taps` times outside it, so every
  // dot product below reads in range with no branch (and JavaScriptCore keeps the loop tight).
  const before = taps / 2 - 1
  const x = new Float64Array(n + taps)
  x.fill(pcm[0]!, 0, before)
  for (let i = 0; i < n; i++) x[before + i] = pcm[i]!
  x.fill(pcm[n - 1]!, before + n)
  // Output j reads from input `base` (in x) with the weights of row `phase`; both advance by
  // `step` / `phases` per output sample, in whole numbers.
  let base = 0
  let phase = 0
  for (let j = 0; j < out.length; j++) {
    const acc = dot(weights, phase * taps, x, base, taps)
    const v = Math.round(acc)
    out[j] = v > 32767 ? 32767 : Math.max(v, -32768)
    phase += step
    while (phase >= phases) {
      phase -= phases
      base++
    }
  }
  return out
}

/** Σ weights[w + k] · x[i + k] for k < taps (even), in two running sums to halve the additions' dependency chain. */
function dot(weights: Float64Array, w: number, x: Float64Array, i: number, taps: number): number {
  let a = 0
  let b = 0
  for (const end = w + taps; w < end; w += 2, i += 2) {
    a += weights[w]! * x[i]!
    b += weights[w + 1]! * x[i + 1]!
  }
  return a + b
}

/** Chunks of audio, one after another, as one. */
export function joinPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** Root-mean-square level of a chunk, 0..1 of full scale (the energy VAD and tests read it). */
export function rms(pcm: Int16Array): number {
  if (!pcm.length) return 0
  let sum = 0
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!
  return Math.sqrt(sum / pcm.length) / 32768
}
