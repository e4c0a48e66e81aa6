/**
 * The end-of-turn rules alone on the corpus's turn cases, no service and no line: each case's
 * audio is fed to the voice cues (src/media/turn-cues/voice-cues.ts) 20 ms at a time, with a speech
 * verdict per frame from its level (above -45 dBFS, the line test's audibility), and at every
 * pause the rules are asked how long to wait. A pause inside a turn shorter than that wait is
 * let be; a longer one is a false cut-off. The wait after the last word is the complete-turn
 * wait. Printed four times: with no words as pocketsphinx gives them (every pause waits the
 * same), alone and with the voice's cues; then with a vendor's final words (the words said
 * before the pause, exactly, as Deepgram gives them after a Finalize) and the voice's cues, as
 * the script writes them (punctuated) and with no punctuation. What the line adds (the VAD's own
 * end of speech, the host's load, interim words) is bench:turn-taking's.
 *
 *   bun bench/turn-corpus/rules.ts        (npm run bench:turn-taking with BENCH_MODE=rules)
 *   BENCH_PATIENCE=patient bun bench/turn-corpus/rules.ts   (an agent's voice.patience: quick, patient, or ms)
 */
import { DEFAULT_DIALS, PATIENCE_LEVELS, withPatience } from '../../src/media/dials'
import { endOfTurn, TRAILING_WAIT_MS } from '../../src/media/end-of-turn'
import { VoiceCues } from '../../src/media/turn-cues/voice-cues'
import { systemBinary } from '../../test/support/system-binary'
import { dbfs } from '../../test/support/twilio-line'
import { percentile } from '../stats'
import { render } from './audio'
import { CORPUS, type TurnCase } from './cases'

/** An agent's `voice.patience` (BENCH_PATIENCE=quick|normal|patient, or a wait in ms): normal unless given. */
const PATIENCE = ((p = process.env.BENCH_PATIENCE) => {
  const level = PATIENCE_LEVELS.find((l) => l === p)
  return level ? { level, waitMs: null } : p ? { level: 'normal' as const, waitMs: Number(p) } : DEFAULT_DIALS.patience
})()

const FRAME = 160
const SPEECH_DBFS = -45

/** What the rules are told of the words: none (pocketsphinx), or the words said so far, with the script's punctuation or none. */
type Words = 'none' | 'punctuated' | 'bare'

const MODES: { words: Words; cues: boolean; title: string }[] = [
  { words: 'none', cues: false, title: 'words alone (none, as pocketsphinx)' },
  { words: 'none', cues: true, title: 'words (none, as pocketsphinx) and the voice' },
  { words: 'punctuated', cues: true, title: "a vendor's words, punctuated as the script, and the voice" },
  { words: 'bare', cues: true, title: "a vendor's words with no punctuation, and the voice" },
]

/** The words said before the `n`-th pause (all of them when `n` is past the last), as the mode gives them. */
function saidBefore(c: TurnCase, n: number, words: Words): string {
  if (words === 'none') return ''
  const said: string[] = []
  let pauses = 0
  for (const p of c.pieces) {
    if ('pauseMs' in p && pauses++ === n) break
    if ('say' in p) said.push(p.say)
  }
  const text = said.join(' ')
  return words === 'bare'
    ? text
        .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim()
    : text
}

interface Judged {
  c: TurnCase
  cut: boolean[]
  endWaitMs: number
  why: string[]
}

function judge(c: TurnCase, rendered: ReturnType<typeof render>, words: Words, cues: boolean): Judged {
  const { pcm, pauses } = rendered
  const audio = new VoiceCues()
  const cut: boolean[] = []
  const why: string[] = []
  const ask = () => withPatience(endOfTurn(saidBefore(c, cut.length, words), TRAILING_WAIT_MS, cues ? audio.cues() : undefined), PATIENCE, words !== 'none')
  let pause = 0
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
    const frame = pcm.subarray(at, at + FRAME)
    audio.push(frame, 8_000, [{ speech: dbfs(frame) > SPEECH_DBFS, ms: 20, end: FRAME }])
    const p = pauses[pause]
    // The first silent frame of a pause: the rules are asked, as the session asks at the VAD's pause.
    if (p && (at + FRAME) / 8 >= p.fromMs) {
      const j = ask()
      cut.push(j.waitMs < p.toMs - p.fromMs)
      why.push(`${Math.round(p.toMs - p.fromMs)} ms pause: wait ${j.waitMs} (${j.why})`)
      pause++
    }
  }
  const end = ask()
  why.push(`end: wait ${end.waitMs} (${end.why})`)
  return { c, cut, endWaitMs: end.waitMs, why }
}

export function rulesOnCorpus(espeak: string, verbose: boolean): void {
  const cases = CORPUS.map((c, i) => ({ c, i })).filter((x): x is { c: TurnCase; i: number } => x.c.kind === 'turn')
  const rendered = cases.map(({ c, i }) => render(espeak, c.pieces, c.voice, c.rate, 1_000 + i))
  for (const { words, cues, title } of MODES) {
    const judged = cases.map(({ c }, k) => judge(c, rendered[k]!, words, cues))
    const unfinished = judged.filter((j) => j.c.label === 'unfinished')
    const cutCases = unfinished.filter((j) => j.cut.some(Boolean))
    const pausesCut = unfinished.reduce((n, j) => n + j.cut.filter(Boolean).length, 0)
    const pausesAll = unfinished.reduce((n, j) => n + j.cut.length, 0)
    const waits = judged.filter((j) => j.c.label === 'complete').map((j) => j.endWaitMs)
    const allEnds = judged.map((j) => j.endWaitMs)
    const families = [...new Set(unfinished.map((j) => j.c.family))]
    console.log(`\npatience ${PATIENCE.waitMs ?? PATIENCE.level}, rules only, ${title}: ${judged.length} turn cases`)
    console.log(
      `  false cut-offs: ${cutCases.length} of ${unfinished.length} unfinished cases (${((100 * cutCases.length) / unfinished.length).toFixed(1)}%), ${pausesCut} of ${pausesAll} pauses inside turns`,
    )
    console.log(`  by family: ${families.map((f) => `${f} ${cutCases.filter((j) => j.c.family === f).length}/${unfinished.filter((j) => j.c.family === f).length}`).join(', ')}`)
    console.log(
      `  complete-turn wait: complete cases p50 ${percentile(waits, 50)} ms, p95 ${percentile(waits, 95)} ms; every case's last pause p50 ${percentile(allEnds, 50)} ms, p95 ${percentile(allEnds, 95)} ms`,
    )
    if (verbose) for (const j of judged) console.log(`    ${j.c.id} ${j.c.voice} ${j.c.rate}: ${j.why.join('; ')}`)
  }
}

if (import.meta.main) {
  const espeak = systemBinary('espeak-ng', 'apt-get install espeak-ng')
  if (!espeak.path) {
    console.error(`needs ${espeak.name}: ${espeak.install}`)
    process.exit(2)
  }
  rulesOnCorpus(espeak.path, process.env.BENCH_VERBOSE === '1')
}
