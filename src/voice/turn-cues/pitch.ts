/**
 * Pitch at the end of the caller's last voiced stretch: a statement or a wh-question ends on a
 * fall; a speaker who means to go on keeps the pitch up (level or rising: "continuation rise",
 * Pierrehumbert & Hirschberg 1990; used for end-of-turn by Gravano & Hirschberg 2011). F0 is
 * estimated with YIN (de Cheveigné & Kawahara 2002), written here in a few lines: the npm
 * packages that do it (pitchfinder) are GPL-3.0, which a hosted service should not link.
 */

/** The voice's F0 range on the phone: 60 Hz (a low male voice) to 400 Hz (a high female or child voice). */
const MIN_F0 = 60
const MAX_F0 = 400
/** YIN's threshold on the cumulative mean normalized difference (the paper's 0.10–0.15); above it the frame is unvoiced. */
const YIN_THRESHOLD = 0.15
/** Analysis frames: 40 ms (two periods of the lowest F0), one every 10 ms, the usual pitch-tracker step. */
const FRAME_MS = 40
const HOP_MS = 10
/** The stretch looked at: the last 700 ms of speech before the pause (a final word or two). */
const STRETCH_MS = 700
/** Its end: the last voiced 150 ms (the final syllable's nucleus); compared with what came before it. */
const TAIL_MS = 150
/** Fewer voiced frames than this in the tail or before it: too little to tell (a breathy "mhm", a whisper). */
const MIN_VOICED_FRAMES = 3
/**
 * Semitones between the tail and the stretch before it that count as a fall or a rise. A
 * declarative fall spans 2–6 semitones over the last word; under 1.5 is level (Ladd 2008; 't Hart
 * et al. 1990 put the perceptible glide near 1.5 semitones).
 */
export const FALL_SEMITONES = -1.5
export const RISE_SEMITONES = 1.5
/** Frames quieter than this (below the stretch's loudest frame) are not read: F0 in a fading tail is noise. */
const QUIET_DB = 30

export type FinalPitch = 'falling' | 'level' | 'rising' | 'unknown'

/** F0 of one frame in Hz by YIN, or null when the frame is not voiced. */
export function yin(frame: Float32Array, rate: number): number | null {
  const maxLag = Math.min(Math.floor(rate / MIN_F0), Math.floor(frame.length / 2))
  const minLag = Math.max(2, Math.floor(rate / MAX_F0))
  const width = frame.length - maxLag
  const d = new Float32Array(maxLag + 1)
  for (let lag = 1; lag <= maxLag; lag++) {
    let sum = 0
    for (let i = 0; i < width; i++) {
      const x = frame[i]! - frame[i + lag]!
      sum += x * x
    }
    d[lag] = sum
  }
  // Cumulative mean normalized difference; the first dip under the threshold is the period.
  let running = 0
  for (let lag = 1; lag <= maxLag; lag++) {
    running += d[lag]!
    d[lag] = running > 0 ? (d[lag]! * lag) / running : 1
  }
  for (let lag = minLag; lag < maxLag; lag++) {
    if (d[lag]! >= YIN_THRESHOLD) continue
    while (lag + 1 < maxLag && d[lag + 1]! < d[lag]!) lag++
    // Parabolic interpolation around the minimum for a sub-sample period.
    const a = d[lag - 1]!
    const b = d[lag]!
    const c = d[lag + 1]!
    const shift = a + c - 2 * b !== 0 ? (a - c) / (2 * (a + c - 2 * b)) : 0
    return rate / (lag + shift)
  }
  return null
}

/** One F0 (Hz) or null per 10 ms frame of `pcm`, with each frame's level in dB. */
export function pitchTrack(pcm: Int16Array, rate: number): { f0: number | null; db: number }[] {
  const size = Math.round((FRAME_MS * rate) / 1000)
  const hop = Math.round((HOP_MS * rate) / 1000)
  const out: { f0: number | null; db: number }[] = []
  const frame = new Float32Array(size)
  for (let at = 0; at + size <= pcm.length; at += hop) {
    let energy = 0
    for (let i = 0; i < size; i++) {
      const x = pcm[at + i]! / 32768
      frame[i] = x
      energy += x * x
    }
    const db = energy > 0 ? 10 * Math.log10(energy / size) : -120
    out.push({ f0: yin(frame, rate), db })
  }
  return out
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/**
 * The pitch movement at the end of `pcm` (the caller's speech up to their last speech window):
 * the median F0 of the last voiced TAIL_MS against that of the voiced frames before it in the
 * last STRETCH_MS, in semitones.
 */
export function finalPitch(pcm: Int16Array, rate: number): { pitch: FinalPitch; semitones: number | null } {
  const stretch = pcm.subarray(Math.max(0, pcm.length - Math.round((STRETCH_MS * rate) / 1000)))
  const track = pitchTrack(stretch, rate)
  const loudest = Math.max(-120, ...track.map((t) => t.db))
  const voiced = track.map((t, i) => ({ ...t, i })).filter((t) => t.f0 !== null && t.db > loudest - QUIET_DB)
  if (voiced.length < 2 * MIN_VOICED_FRAMES) return { pitch: 'unknown', semitones: null }
  const lastFrame = voiced[voiced.length - 1]!.i
  // A short stretch ("yes", "no thanks"): its second half against its first.
  const tailFrames = Math.min(TAIL_MS / HOP_MS, Math.floor((lastFrame - voiced[0]!.i + 1) / 2))
  const tail = voiced.filter((t) => t.i > lastFrame - tailFrames).map((t) => t.f0!)
  const before = voiced.filter((t) => t.i <= lastFrame - tailFrames).map((t) => t.f0!)
  if (tail.length < MIN_VOICED_FRAMES || before.length < MIN_VOICED_FRAMES) return { pitch: 'unknown', semitones: null }
  const semitones = 12 * Math.log2(median(tail) / median(before))
  return { pitch: semitones <= FALL_SEMITONES ? 'falling' : semitones >= RISE_SEMITONES ? 'rising' : 'level', semitones }
}
