/**
 * bench:wer — pocketsphinx's word error rate on phone-quality audio: ten sentences spoken by
 * espeak-ng, taken to the phone line (8 kHz mu-law and back, as the bridge hears it), transcribed
 * by our pocketsphinx adapter. Needs espeak-ng and pocketsphinx (apt-get install espeak-ng
 * pocketsphinx pocketsphinx-en-us).
 *
 *   bun bench/wer.ts
 */
import { decodeMulaw, encodeMulaw, resample } from '../src/media/codecs'
import { PocketsphinxStt } from '../src/providers/stt/pocketsphinx'
import { EspeakTts } from '../src/providers/tts/espeak'

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

/** Word-level Levenshtein distance / reference words. */
function wer(ref: string, hyp: string): { errors: number; words: number } {
  const r = ref.split(' ').filter(Boolean)
  const h = hyp.toLowerCase().replace(/[^a-z' ]/g, ' ').split(/\s+/).filter(Boolean)
  const d = Array.from({ length: r.length + 1 }, (_, i) => [i, ...Array(h.length).fill(0)])
  for (let j = 1; j <= h.length; j++) d[0]![j] = j
  for (let i = 1; i <= r.length; i++) for (let j = 1; j <= h.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1))
  return { errors: d[r.length]![h.length]!, words: r.length }
}

const tts = new EspeakTts()
const stt = new PocketsphinxStt()
let errors = 0
let words = 0
for (const sentence of SENTENCES) {
  const parts: Int16Array[] = []
  for await (const pcm of tts.synthesize(sentence, { voice: 'aria', language: 'en' })) parts.push(pcm)
  const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) (all.set(p, at), (at += p.length))
  const line = decodeMulaw(encodeMulaw(resample(all, tts.sampleRate, 8000)))
  const session = await stt.open()
  session.push(resample(line, 8000, session.sampleRate))
  const heard = await session.finalize()
  const w = wer(sentence, heard)
  errors += w.errors
  words += w.words
  console.log(`  "${sentence}" → "${heard}" (${w.errors}/${w.words})`)
}
console.log(`pocketsphinx word error rate on espeak-ng speech over mu-law 8 kHz: ${((errors / words) * 100).toFixed(0)}% (${errors}/${words} words)`)
