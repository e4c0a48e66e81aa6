/**
 * bench:wer — pocketsphinx on phone-quality audio: ten sentences spoken by espeak-ng, taken to the
 * phone line (8 kHz mu-law and back, as the bridge hears it) and transcribed by
 *   - the live decoder (libpocketsphinx through bun:ffi, one decoder for the ten sentences as for
 *     one call), fed in 20 ms frames at real-time pace, each sentence followed by 200 ms of
 *     silence (the short end-of-turn wait) and then `finalize`: word error rate, and finalize →
 *     final transcript p50/p95 (end of speech → final is that wait plus this);
 *   - the process per utterance (`pocketsphinx_continuous`, the fallback), when installed, for
 *     comparison;
 * and the decoder's own costs on this host: `ps_init`, `ps_process_raw` + `ps_get_hyp` per 20 ms
 * frame, `ps_end_utt` (on this thread, no worker). Needs espeak-ng and libpocketsphinx3
 * pocketsphinx-en-us (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us).
 *
 *   bun bench/wer.ts
 */

import { PocketsphinxStt } from '../src/providers/stt/pocketsphinx'
import { Decoder, sphinxMissing } from '../src/providers/stt/pocketsphinx-ffi'
import { PocketsphinxLiveStt } from '../src/providers/stt/pocketsphinx-live'
import { EspeakTts } from '../src/providers/tts/espeak'
import { decodeMulaw, encodeMulaw, resample } from '../src/voice/codecs'
import type { SpeechToText } from '../src/voice/ports/stt'

const SENTENCES = [
  'what time do you open on saturday',
  'i would like to book a table for two',
  'can you send me the invoice by email',
  'my order has not arrived yet',
  'is there parking near the shop',
  'please call me back tomorrow morning',
  'how much does the delivery cost',
  'i want to cancel my appointment',
  'do you have this in a larger size',
  'thank you that is all for today',
]
const RATE = 16_000
const FRAME = RATE / 50
/** The short end-of-turn wait the pipeline aims for when a turn is plainly complete (issue 25: ~200–250 ms). */
const TRAILING_SILENCE_MS = 200

/** Word-level Levenshtein distance / reference words. */
function wer(ref: string, hyp: string): { errors: number; words: number } {
  const r = ref.split(' ').filter(Boolean)
  const h = hyp
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
  const d = Array.from({ length: r.length + 1 }, (_, i) => [i, ...Array(h.length).fill(0)])
  for (let j = 1; j <= h.length; j++) d[0]![j] = j
  for (let i = 1; i <= r.length; i++) for (let j = 1; j <= h.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1))
  return { errors: d[r.length]![h.length]!, words: r.length }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
const ms = (x: number) => `${x.toFixed(1)} ms`

const missing = sphinxMissing()
if (missing) {
  console.error(missing)
  process.exit(1)
}

const tts = new EspeakTts()
const lines: Int16Array[] = []
for (const sentence of SENTENCES) {
  const parts: Int16Array[] = []
  for await (const pcm of tts.synthesize(sentence, { voice: 'aria', language: 'en' })) parts.push(pcm)
  const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    all.set(p, at)
    at += p.length
  }
  lines.push(resample(decodeMulaw(encodeMulaw(resample(all, tts.sampleRate, 8000))), 8000, RATE))
}

async function run(stt: SpeechToText, paced: boolean): Promise<{ errors: number; words: number; finals: number[] }> {
  const session = await stt.open({ language: 'en' })
  let errors = 0
  let words = 0
  const finals: number[] = []
  for (const [i, sentence] of SENTENCES.entries()) {
    const pcm = new Int16Array(lines[i]!.length + (TRAILING_SILENCE_MS * RATE) / 1000)
    pcm.set(lines[i]!)
    // The pipeline's VAD would say so at the first speech window: a pooled decoder is taken now.
    session.speech?.()
    if (paced) {
      const start = performance.now()
      for (let f = 0; f * FRAME < pcm.length; f++) {
        session.push(pcm.slice(f * FRAME, (f + 1) * FRAME))
        await Bun.sleep(Math.max(0, start + (f + 1) * 20 - performance.now()))
      }
    } else session.push(pcm)
    const asked = performance.now()
    const heard = await session.finalize()
    finals.push(performance.now() - asked)
    const w = wer(sentence, heard)
    errors += w.errors
    words += w.words
    console.log(`  "${sentence}" → "${heard}" (${w.errors}/${w.words})`)
  }
  await session.close()
  return { errors, words, finals }
}

const report = (name: string, r: { errors: number; words: number; finals: number[] }) =>
  console.log(
    `${name}: word error rate ${((r.errors / r.words) * 100).toFixed(0)}% (${r.errors}/${r.words} words); finalize → final transcript p50 ${ms(pct(r.finals, 0.5))}, p95 ${ms(pct(r.finals, 0.95))}\n`,
  )

console.log(`live decoder (20 ms frames in real time, ${TRAILING_SILENCE_MS} ms of silence, then finalize):`)
report('live', await run(new PocketsphinxLiveStt({ decoders: 1 }), true))

if (Bun.which('pocketsphinx_continuous')) {
  console.log('process per utterance (pocketsphinx_continuous on a WAV at finalize):')
  report('per utterance', await run(new PocketsphinxStt(), false))
}

// The decoder's costs on this thread: what the worker keeps off the event loop.
let start = performance.now()
const decoder = new Decoder()
const init = performance.now() - start
const frames: number[] = []
const ends: number[] = []
for (const pcm of lines) {
  for (let f = 0; f * FRAME < pcm.length; f++) {
    start = performance.now()
    decoder.process(pcm.subarray(f * FRAME, (f + 1) * FRAME))
    decoder.hypothesis()
    frames.push(performance.now() - start)
  }
  start = performance.now()
  decoder.finish()
  ends.push(performance.now() - start)
}
decoder.free()
console.log(
  `decoder on this host: ps_init ${ms(init)}; ps_process_raw + ps_get_hyp per 20 ms frame p50 ${ms(pct(frames, 0.5))}, p95 ${ms(pct(frames, 0.95))}, max ${ms(pct(frames, 1))} (${frames.length} frames); ps_end_utt p50 ${ms(pct(ends, 0.5))}, max ${ms(pct(ends, 1))}`,
)
