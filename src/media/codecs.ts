/**
 * Audio on the wire ⇄ the pipeline's samples. The pipeline works in 16-bit PCM; the phone line
 * carries G.711 mu-law at 8 kHz (Twilio Media Streams) and browsers send 16-bit PCM (L16).
 * mu-law comes from `alawmulaw`, rate changes from `wave-resampler` (same author as `wavefile`).
 */
import { mulaw } from 'alawmulaw'
import { resample as resampleSamples } from 'wave-resampler'

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
 * Changes the rate of one chunk. Upsampling (the line's 8 kHz to an STT's 16 kHz) interpolates
 * linearly and needs no filter; downsampling (a TTS's 16/24 kHz to the line) low-pass filters
 * first so the voice does not alias. Chunks are resampled alone: at the 20–100 ms chunks of this
 * pipeline the seam is one sample, inaudible on a phone line.
 */
export function resample(pcm: Int16Array, from: number, to: number): Int16Array {
  if (from === to || pcm.length === 0) return pcm
  const up = to > from
  const out = resampleSamples(pcm, from, to, up ? { method: 'linear', LPF: false } : { method: 'linear', LPF: true, LPFType: 'IIR' })
  const samples = new Int16Array(out.length)
  for (let i = 0; i < out.length; i++) samples[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]!)))
  return samples
}

/** Root-mean-square level of a chunk, 0..1 of full scale (the energy VAD and tests read it). */
export function rms(pcm: Int16Array): number {
  if (!pcm.length) return 0
  let sum = 0
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!
  return Math.sqrt(sum / pcm.length) / 32768
}
