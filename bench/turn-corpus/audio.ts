/**
 * The turn-taking corpus as audio on the phone line: speech from two synthesiser families (the
 * voice and rate each case names: espeak-ng's formant voices, or `flite:<voice>`, Festival's
 * flite with its diphone and clustergen voices) and noises made here from a seeded generator,
 * all at 8 kHz through G.711 μ-law as Twilio carries it. Nothing is read from elsewhere: the same
 * case gives the same samples on every run.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../../src/voice/codecs'
import { type SystemBinary, systemBinary } from '../../test/support/system-binary'
import { type Piece, synthOf } from './cases'

/** The synthesisers' programs (a path, or null when absent: that family's cases are skipped). */
export interface Synths {
  espeak: string
  flite: string | null
}

/** Finds both programs; null (after saying what is missing) when espeak-ng, which every bench needs, is absent. */
export function findSynths(bench: string): Synths | null {
  const espeak = systemBinary('espeak-ng', 'apt-get install espeak-ng')
  const flite = systemBinary('flite', 'apt-get install flite')
  if (!espeak.path) {
    console.error(`${bench} needs ${espeak.name}: ${espeak.install}`)
    return null
  }
  if (!flite.path) console.error(needs(flite))
  return { espeak: espeak.path, flite: flite.path }
}
const needs = (b: SystemBinary) => `needs ${b.name}: ${b.install}; its voices' cases are left out`

/** Whether a case's voice can be said here. */
export const canSay = (synths: Synths, voice: string) => synthOf(voice) === 'espeak-ng' || synths.flite !== null

/** Below this a 10 ms slice is silence when a synthesized piece is trimmed (the line test's -45 dBFS audibility, with margin). */
const TRIM_DBFS = -50
/** A phone line is never digitally silent: its noise floor here, well under the -45 dBFS a frame needs to count as speech. */
const LINE_FLOOR_DBFS = -66

const dbToGain = (db: number) => 10 ** (db / 20)

/** A small seeded generator (mulberry32): noises are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function sliceDbfs(pcm: Int16Array, from: number, to: number): number {
  let sum = 0
  for (let i = from; i < to; i++) sum += pcm[i]! * pcm[i]!
  const rms = Math.sqrt(sum / Math.max(1, to - from))
  return rms > 0 ? 20 * Math.log10(rms / 32768) : -120
}

/** Leading and trailing silence off, so the pauses a case puts between pieces are the pauses the line carries. */
function trimmed(pcm: Int16Array): Int16Array {
  const step = PHONE_RATE / 100
  let from = 0
  let to = pcm.length
  while (from + step <= to && sliceDbfs(pcm, from, from + step) < TRIM_DBFS) from += step
  while (to - step >= from && sliceDbfs(pcm, to - step, to) < TRIM_DBFS) to -= step
  return pcm.slice(from, to)
}

/** espeak-ng's default rate (words a minute): a flite voice's duration is stretched by this over the case's rate. */
const ESPEAK_DEFAULT_WPM = 175

function espeakWav(espeak: string, text: string, voice: string, rate: number, amplitude: number): Buffer {
  const run = spawnSync(espeak, ['--stdout', '-v', voice, '-s', String(rate), '-a', String(amplitude), '--', text], { maxBuffer: 32 << 20 })
  if (run.status !== 0 || !run.stdout?.length) throw new Error(`espeak-ng -v ${voice} failed: ${run.stderr}`)
  return run.stdout
}

/** flite writes its wave to a file only (it cannot open a pipe as /dev/stdout): a scratch file, read and removed. */
function fliteWav(flite: string, text: string, voice: string, rate: number): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'corpus-flite-'))
  try {
    const out = join(dir, 'say.wav')
    const run = spawnSync(flite, ['-voice', voice, '--setf', `duration_stretch=${(ESPEAK_DEFAULT_WPM / rate).toFixed(3)}`, '-t', text, '-o', out])
    if (run.status !== 0) throw new Error(`flite -voice ${voice} failed: ${run.stderr}`)
    return readFileSync(out)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The words at 8 kHz, trimmed: espeak-ng (`-v voice -s rate -a amplitude`) or flite (`-voice`,
 * the rate as a duration stretch against espeak-ng's default, the amplitude as a gain).
 */
export function speak(synths: Synths, text: string, voice: string, rate: number, amplitude = 160): Int16Array {
  const flite = voice.startsWith('flite:')
  if (flite && !synths.flite) throw new Error(`the voice ${voice} needs flite: apt-get install flite`)
  const wav = flite ? fliteWav(synths.flite!, text, voice.slice('flite:'.length), rate) : espeakWav(synths.espeak, text, voice, rate, amplitude)
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength)
  const rateHz = view.getUint32(24, true)
  // Both write a 44-byte header (espeak-ng's with an open-ended data size when it streams to stdout).
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength - ((wav.byteLength - 44) % 2)))
  // A piece's amplitude (espeak-ng's -a, 160 here unless a case says) as a gain on flite's own level.
  if (flite && amplitude !== 160) for (let i = 0; i < pcm.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round((pcm[i]! * amplitude) / 160)))
  return trimmed(resample(pcm, rateHz, PHONE_RATE))
}

/** The line's noise floor for `ms` (the pause between two pieces). */
function floor(ms: number, rnd: () => number): Int16Array {
  const out = new Int16Array(Math.round((ms * PHONE_RATE) / 1000))
  const amp = 32768 * dbToGain(LINE_FLOOR_DBFS) * Math.sqrt(3)
  for (let i = 0; i < out.length; i++) out[i] = Math.round((rnd() * 2 - 1) * amp)
  return out
}

/**
 * A noise a caller makes that is not speech, built from filtered noise with an envelope:
 *  - cough: one or two 120–260 ms bursts of broadband noise with a fast attack (a glottal burst),
 *    low-passed so most energy sits under 2 kHz, as coughs recorded on phones do;
 *  - clatter: a few sharp 15–40 ms clicks (a phone put down on a table, keys);
 *  - breath: 300–500 ms of soft high-passed noise (a breath into the mouthpiece);
 *  - rustle: 400–700 ms of low, slowly varying noise (clothes against the microphone).
 */
export function noise(kind: 'cough' | 'clatter' | 'breath' | 'rustle', seed: number, levelDb: number): Int16Array {
  const rnd = seeded(seed)
  const ms = (lo: number, hi: number) => Math.round(((lo + rnd() * (hi - lo)) * PHONE_RATE) / 1000)
  const peak = 32768 * dbToGain(levelDb)
  const parts: { len: number; gap: number; attack: number; lowpass: number; highpass: boolean }[] = []
  if (kind === 'cough') {
    const bursts = rnd() < 0.5 ? 1 : 2
    for (let b = 0; b < bursts; b++) parts.push({ len: ms(120, 260), gap: ms(80, 160), attack: 0.05, lowpass: 0.35, highpass: false })
  } else if (kind === 'clatter') {
    const clicks = 2 + Math.floor(rnd() * 3)
    for (let c = 0; c < clicks; c++) parts.push({ len: ms(15, 40), gap: ms(40, 160), attack: 0.02, lowpass: 0.9, highpass: false })
  } else if (kind === 'breath') parts.push({ len: ms(300, 500), gap: 0, attack: 0.4, lowpass: 0.8, highpass: true })
  else parts.push({ len: ms(400, 700), gap: 0, attack: 0.3, lowpass: 0.08, highpass: false })
  const total = parts.reduce((n, p) => n + p.len + p.gap, 0)
  const out = new Int16Array(total)
  let at = 0
  for (const p of parts) {
    let lp = 0
    let prev = 0
    for (let i = 0; i < p.len; i++) {
      const x = rnd() * 2 - 1
      lp += p.lowpass * (x - lp)
      const y = p.highpass ? lp - prev : lp
      prev = lp
      const t = i / p.len
      const env = t < p.attack ? t / p.attack : Math.exp((-4 * (t - p.attack)) / (1 - p.attack))
      out[at + i] = Math.max(-32768, Math.min(32767, Math.round(y * env * peak * 2.5)))
    }
    at += p.len + p.gap
  }
  return out
}

/** A case's pieces in order on the line's noise floor, through μ-law as the line carries them; `pauses`: where each pause inside it starts and ends (ms from the start). */
export function render(synths: Synths, pieces: Piece[], voice: string, rate: number, seed: number): { pcm: Int16Array; pauses: { fromMs: number; toMs: number }[] } {
  const rnd = seeded(seed)
  const parts: Int16Array[] = []
  const pauses: { fromMs: number; toMs: number }[] = []
  let samples = 0
  for (const p of pieces) {
    let part: Int16Array
    if ('pauseMs' in p) {
      part = floor(p.pauseMs, rnd)
      pauses.push({ fromMs: (samples * 1000) / PHONE_RATE, toMs: ((samples + part.length) * 1000) / PHONE_RATE })
    } else if ('noise' in p) part = noise(p.noise, seed + parts.length, p.levelDb ?? -18)
    else part = speak(synths, p.say, p.voice ?? voice, p.rate ?? rate, p.amplitude)
    parts.push(part)
    samples += part.length
  }
  const pcm = new Int16Array(samples)
  let at = 0
  for (const part of parts) {
    pcm.set(part, at)
    at += part.length
  }
  return { pcm: decodeMulaw(encodeMulaw(pcm)), pauses }
}
