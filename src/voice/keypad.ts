/**
 * The telephone keypad in audio (DTMF, ITU-T Q.23/Q.24): each key is one tone from the low group
 * (rows) plus one from the high group (columns). `keypadTones` writes digits as tones (the agent
 * pressing keys into a phone menu, and the sandbox's callee pressing them); `KeypadListener` hears
 * them in a caller's audio with the Goertzel algorithm (on the sandbox network, whose callee sends
 * in-band tones; Twilio reports keys as `dtmf` messages instead). No npm package for either is
 * kept up, and both are a few dozen lines.
 */
import { PHONE_RATE, resample } from './codecs'

/** The keys, row by row: rows 697, 770, 852, 941 Hz; columns 1209, 1336, 1477, 1633 Hz (Q.23). */
const KEYS = ['123A', '456B', '789C', '*0#D']
const ROWS = [697, 770, 852, 941]
const COLS = [1209, 1336, 1477, 1633]
/** One key, as a line's `dtmf` message names it. */
export const KEYPAD_DIGIT = /^[0-9*#A-D]$/

/** A key's tone and the silence after it: 100 ms each, what carriers' own senders use; Q.24 asks at least 40 ms of each. */
export const TONE_MS = 100
export const TONE_GAP_MS = 100
/** What `w` waits, as Twilio's `sendDigits` does. */
export const WAIT_MS = 500
/** Each of the two tones at -9 dBFS: together loud and clear, well short of clipping. */
const TONE_AMPLITUDE = 11_600

/** `digits` as audio at `rate`: each key's two tones for TONE_MS, then TONE_GAP_MS of silence; `w` waits WAIT_MS. */
export function keypadTones(digits: string, rate = PHONE_RATE): Int16Array {
  const n = (ms: number) => Math.round((ms * rate) / 1000)
  const total = [...digits].reduce((sum, d) => sum + (d === 'w' ? n(WAIT_MS) : n(TONE_MS) + n(TONE_GAP_MS)), 0)
  const out = new Int16Array(total)
  let at = 0
  for (const d of digits) {
    if (d === 'w') {
      at += n(WAIT_MS)
      continue
    }
    const row = KEYS.findIndex((r) => r.includes(d))
    if (row < 0) throw new RangeError(`not a keypad key: ${d}`)
    const low = ROWS[row]!
    const high = COLS[KEYS[row]!.indexOf(d)]!
    for (let i = 0; i < n(TONE_MS); i++) {
      const t = i / rate
      out[at + i] = Math.round(TONE_AMPLITUDE * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t)))
    }
    at += n(TONE_MS) + n(TONE_GAP_MS)
  }
  return out
}

/** Goertzel blocks of 205 samples at 8 kHz (25.6 ms): the classic DTMF block, fine enough to part neighbouring tones (~39 Hz). */
const BLOCK = 205
/** A block quieter than this (RMS, ~-42 dBFS) holds no key. */
const MIN_RMS = 260
/** The two strongest tones must carry this share of the block's energy: speech spreads its energy, a key does not. */
const MIN_SHARE = 0.7
/** Neither tone may be this much weaker than the other (twist; Q.24 allows 8 dB, i.e. a power ratio ~6). */
const MAX_TWIST = 6.3
/** A key counts once heard in two blocks in a row (~50 ms, past a click), and again only after a block without it. */
const CONFIRM_BLOCKS = 2

/** Hears keys in one caller's audio, in order. Feed it every frame; it keeps the partial block between frames. */
export class KeypadListener {
  private readonly pending = new Float64Array(BLOCK)
  private filled = 0
  private candidate: string | null = null
  private seen = 0
  private reported = false
  /** A key's tone is sounding now (the session keeps it out of the VAD and the speech-to-text). */
  toneNow = false

  /** The keys that started in this audio, in order. */
  push(pcm: Int16Array, rate: number): string[] {
    const samples = rate === PHONE_RATE ? pcm : resample(pcm, rate, PHONE_RATE)
    const keys: string[] = []
    for (let i = 0; i < samples.length; i++) {
      this.pending[this.filled++] = samples[i]!
      if (this.filled < BLOCK) continue
      this.filled = 0
      const key = keyOf(this.pending)
      this.toneNow = key !== null
      if (key === null || key !== this.candidate) {
        this.candidate = key
        this.seen = key === null ? 0 : 1
        this.reported = false
        continue
      }
      this.seen++
      if (!this.reported && this.seen >= CONFIRM_BLOCKS) {
        this.reported = true
        keys.push(key)
      }
    }
    return keys
  }
}

/** The key one block holds, or null. */
function keyOf(block: Float64Array): string | null {
  let energy = 0
  for (const x of block) energy += x * x
  if (Math.sqrt(energy / block.length) < MIN_RMS) return null
  const share = (f: number) => (2 * goertzel(block, f)) / (block.length * energy)
  const rows = ROWS.map(share)
  const cols = COLS.map(share)
  const row = strongest(rows)
  const col = strongest(cols)
  const r = rows[row]!
  const c = cols[col]!
  if (r + c < MIN_SHARE || r > c * MAX_TWIST || c > r * MAX_TWIST) return null
  return KEYS[row]![col]!
}

/** The power of frequency `f` in the block (Goertzel), scaled so a lone full-block tone of amplitude A gives (A·N/2)². */
function goertzel(block: Float64Array, f: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * f) / PHONE_RATE)
  let s1 = 0
  let s2 = 0
  for (const x of block) {
    const s = x + coeff * s1 - s2
    s2 = s1
    s1 = s
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2
}

const strongest = (xs: number[]) => xs.reduce((best, x, i) => (x > xs[best]! ? i : best), 0)

/** How a sequence of keys stands in the transcript: `[keypad] 1234#` (exactly the keys pressed, the `#` that ended it included). */
export const keypadLine = (keys: string): string => `[keypad] ${keys}`
/** The keys of a transcript line written by `keypadLine`, or null. */
export const KEYPAD_LINE = /\[keypad\] ([0-9*#A-D]+)/
/** How the agent reads them: one key at a time, so a model does not take 1234 for a quantity. */
export const keypadPrompt = (keys: string): string => `(The caller pressed ${[...keys].join(' ')} on the keypad.)`
