/**
 * The sandbox network's test voice: a formant synthesiser (a pulse train at a voice-like pitch
 * through two vowel resonators, one syllable per ~3 characters, 180 ms each at speed 1) that Silero VAD hears
 * as speech. It carries no words: it is the sandbox's test double, used only on sandbox calls when
 * no TTS provider (keys or espeak-ng) is available, so the loop runs on a machine with just Node.
 */
import type { SynthesisOptions, TextToSpeech } from '../../voice/public'

const RATE = 8_000
/** A syllable: speech runs at 4–6 syllables a second. */
const SYLLABLE_MS = 180
const VOWELS: [number, number][] = [
  [730, 1090],
  [270, 2290],
  [300, 870],
  [530, 1840],
  [640, 1190],
]

export function synthesiseSyllables(text: string, rate = RATE, speed = 1): Int16Array {
  const syllables = Math.max(2, Math.round(text.replace(/\s+/g, ' ').trim().length / 3))
  const per = Math.round((SYLLABLE_MS * rate) / 1000 / speed)
  const out = new Int16Array(syllables * per)
  let phase = 0
  const y1 = [0, 0]
  const y2 = [0, 0]
  let seed = 1
  for (let i = 0; i < out.length; i++) {
    const s = Math.floor(i / per)
    const pos = (i % per) / per
    const [f1, f2] = VOWELS[(text.charCodeAt(s % text.length) + s) % VOWELS.length]!
    phase += (120 + 30 * Math.sin((i / rate) * 3)) / rate
    let source = 0
    if (phase >= 1) {
      phase -= 1
      source = 1
    }
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    source += 0.02 * (seed / 0x7fffffff - 0.5)
    let v = 0
    for (const [k, f] of [f1, f2].entries()) {
      const r = 0.97
      const th = (2 * Math.PI * f) / rate
      const y = source + 2 * r * Math.cos(th) * y1[k]! - r * r * y2[k]!
      y2[k] = y1[k]!
      y1[k] = y
      v += y * (k ? 0.5 : 1)
    }
    out[i] = Math.max(-32768, Math.min(32767, v * Math.sqrt(Math.sin(Math.PI * pos)) * 1500))
  }
  return out
}

export class SandboxTts implements TextToSpeech {
  readonly name = 'sandbox'
  readonly sampleRate = RATE

  async *synthesize(text: string, options: SynthesisOptions): AsyncIterable<Int16Array> {
    const pcm = synthesiseSyllables(text, RATE, options.speed ?? 1)
    // In 200 ms pieces, as a streaming vendor would send them.
    const piece = RATE / 5
    for (let at = 0; at < pcm.length; at += piece) {
      if (options.signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
      yield pcm.subarray(at, at + piece)
      await Promise.resolve()
    }
  }
}
