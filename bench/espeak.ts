/**
 * bench:espeak — what one sentence of espeak-ng costs the service, spoken the two ways EspeakTts
 * can: a process per sentence (the `espeak-ng` program) and the in-process synthesisers
 * (`libespeak-ng` on a thread, espeak-pool.ts). BENCH_SENTENCES (60) sentences of the kind the
 * agent says (the soak's opening, clause by clause, and the callers' questions), in the agent's
 * default voice, one at a time, then BENCH_CONCURRENCY (8) at a time. Prints per sentence: CPU
 * (this process, its threads and its children, from /proc) and the part on the event loop (the
 * main thread), and the wall time to the first samples and to the last, p50/p95.
 *
 *   bun bench/espeak.ts
 */
import { readFileSync } from 'node:fs'
import { EspeakTts } from '../src/providers/tts/espeak'
import { espeakLibraryMissing } from '../src/providers/tts/espeak-ffi'
import { EspeakPool } from '../src/providers/tts/espeak-pool'
import { percentile } from './stats'

const SENTENCES = Number(process.env.BENCH_SENTENCES ?? 60)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8)
const TEXTS = [
  'Hello Maria, this is the clinic calling about your appointment on Monday at nine.',
  'We would like to confirm the time with you, and tell you what to bring.',
  'Please have your insurance card ready, and arrive ten minutes early.',
  'If the time does not suit you, we can find another one.',
  'What time do you open on saturday?',
  'Can I move my appointment to friday?',
  'Is there parking near the clinic?',
  'Sure.',
]

if (!Bun.which('espeak-ng')) {
  console.error('bench:espeak needs espeak-ng: apt-get install espeak-ng')
  process.exit(2)
}
const missing = espeakLibraryMissing()
if (missing) {
  console.error(`bench:espeak needs libespeak-ng: ${missing}`)
  process.exit(2)
}

/** CPU ms of this process (all threads), of its main thread, and of its reaped children, from /proc. */
function cpu() {
  const fields = (path: string) => readFileSync(path, 'utf8').split(') ')[1]!.split(' ').map(Number)
  const all = fields('/proc/self/stat')
  const main = fields(`/proc/self/task/${process.pid}/stat`)
  // utime, stime, cutime, cstime in clock ticks (USER_HZ = 100 on Linux).
  return { self: (all[11]! + all[12]!) * 10, main: (main[11]! + main[12]!) * 10, children: (all[13]! + all[14]!) * 10 }
}

async function speak(tts: EspeakTts, text: string) {
  const start = performance.now()
  let first = NaN
  let samples = 0
  for await (const pcm of tts.synthesize(text, { voice: 'aria', language: 'en' })) {
    if (!samples) first = performance.now() - start
    samples += pcm.length
  }
  return { first, last: performance.now() - start, samples }
}

async function measure(label: string, tts: EspeakTts, concurrency: number) {
  // Warm: the program's page cache, the library's thread and data, the JIT.
  for (const t of TEXTS) await speak(tts, t)
  const before = cpu()
  const results: Awaited<ReturnType<typeof speak>>[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < SENTENCES) results.push(await speak(tts, TEXTS[next++ % TEXTS.length]!))
    }),
  )
  const after = cpu()
  const n = results.length
  const f = (x: number) => x.toFixed(1)
  const audioS = results.reduce((a, r) => a + r.samples, 0) / tts.sampleRate
  console.log(
    `  ${label}, ${concurrency} at a time: CPU ${f((after.self - before.self + after.children - before.children) / n)} ms a sentence (children ${f((after.children - before.children) / n)}, event loop ${f((after.main - before.main) / n)}); first samples p50 ${f(
      percentile(
        results.map((r) => r.first),
        50,
      ),
    )} ms, p95 ${f(
      percentile(
        results.map((r) => r.first),
        95,
      ),
    )}; whole sentence p50 ${f(
      percentile(
        results.map((r) => r.last),
        50,
      ),
    )} ms, p95 ${f(
      percentile(
        results.map((r) => r.last),
        95,
      ),
    )}; ${f(audioS / n)} s of audio a sentence`,
  )
}

console.log(`bench:espeak — ${SENTENCES} sentences in the default voice (aria: en-us+f3, 175 wpm); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
const program = new EspeakTts('espeak-ng', null)
const pool = new EspeakPool({ size: Math.min(2, CONCURRENCY) })
const library = new EspeakTts('espeak-ng', pool)
await measure('process per sentence', program, 1)
await measure('libespeak-ng, 2 threads', library, 1)
await measure('process per sentence', program, CONCURRENCY)
await measure('libespeak-ng, 2 threads', library, CONCURRENCY)
pool.close()
console.log(`  (CPU from /proc in 10 ms ticks over ${SENTENCES} sentences; load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`)
