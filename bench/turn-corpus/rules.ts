/**
 * The end-of-turn rules alone on the corpus's turn cases, no service and no line (observe.ts: the
 * voice's cues and the words at each pause, from the audio at 20 ms a frame; judge.ts: a pause
 * longer than its wait is a false cut-off, the wait after the last word the complete-turn wait).
 * Every figure is given for all cases and for each synthesiser family (espeak-ng, flite).
 *
 * First the rules with each profile's default waits (src/voice/turn-waits.ts), in four modes: no
 * words as pocketsphinx gives them, alone and with the voice's cues (the local profile); a
 * vendor's final words (exactly the words said before the pause, as Deepgram gives them after a
 * Finalize) and the voice's cues, as the script writes them (punctuated) and with no punctuation
 * (the hosted profile). Then each profile's trade-off curve: one wait swept at a time, the others
 * at their defaults, false cut-offs against the complete-turn wait; the default row is marked.
 * What the line adds (the VAD's own end of speech, the host's load, interim words) is
 * bench:turn-taking's.
 *
 *   npm run bench:turn-rules              BENCH_VERBOSE=1: each case's verdicts with the defaults
 *   BENCH_PATIENCE=patient npm run bench:turn-rules   (an agent's voice.patience: quick, patient, or ms)
 */
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import { HOSTED_WAITS, LOCAL_WAITS, type TurnWaits } from '../../src/voice/turn-waits'
import { canSay, findSynths, render, type Synths } from './audio'
import { CORPUS, type TurnCase } from './cases'
import { brief, bySynth, judge, PATIENCE, type Summary } from './judge'
import { type Observed, observe, type Words } from './observe'

const MODES: { words: Words; cues: boolean; waits: TurnWaits; title: string }[] = [
  { words: 'none', cues: false, waits: LOCAL_WAITS, title: 'local profile, words alone (none, as pocketsphinx)' },
  { words: 'none', cues: true, waits: LOCAL_WAITS, title: 'local profile: words (none, as pocketsphinx) and the voice' },
  { words: 'punctuated', cues: true, waits: HOSTED_WAITS, title: "hosted profile: a vendor's words, punctuated as the script, and the voice" },
  { words: 'bare', cues: true, waits: HOSTED_WAITS, title: "hosted profile: a vendor's words with no punctuation, and the voice" },
]

const steps = (from: number, to: number, by: number) => Array.from({ length: Math.floor((to - from) / by) + 1 }, (_, i) => from + i * by)

/** One swept wait of a profile: the name printed, and the waits at each point. */
interface Sweep {
  name: string
  points: number[]
  at: (ms: number) => TurnWaits
  /** The point the defaults sit at. */
  current: number
}

/** One wait for every pause, the voice not heard: the plainest curve, the yardstick for the others. */
const FIXED: Sweep = { name: 'one wait for every pause', points: steps(300, 1_200, 100), at: (ms) => ({ ...LOCAL_WAITS, unknown: ms }), current: LOCAL_WAITS.unknown }
/** A sweep's steps and the default among them. */
const withDefault = (points: number[], current: number) => [...new Set([...points, current])].sort((a, b) => a - b)

const LOCAL_SWEEPS: Sweep[] = [
  {
    name: 'the voice falls (falling)',
    points: steps(200, 1_100, 100),
    at: (ms) => ({ ...LOCAL_WAITS, falling: ms }),
    current: LOCAL_WAITS.falling,
  },
  {
    name: 'the voice stays up (holding; its floor no higher)',
    points: steps(500, 1_300, 100),
    at: (ms) => ({ ...LOCAL_WAITS, holding: ms, holdingFloor: Math.min(LOCAL_WAITS.holdingFloor, ms) }),
    current: LOCAL_WAITS.holding,
  },
  {
    name: "the caller's own pauses: the least a holding wait comes down to (holdingFloor)",
    points: steps(500, LOCAL_WAITS.holding, 100),
    at: (ms) => ({ ...LOCAL_WAITS, holdingFloor: ms }),
    current: LOCAL_WAITS.holdingFloor,
  },
  { name: 'the voice unreadable (unknown)', points: steps(500, 1_200, 100), at: (ms) => ({ ...LOCAL_WAITS, unknown: ms }), current: LOCAL_WAITS.unknown },
]

/** The voice's waits where the words say nothing (neutral, unknown, falling, holding and its floor), together. */
const voiceAt = (ms: number): TurnWaits => ({ ...HOSTED_WAITS, neutral: ms, unknown: ms, falling: ms, holding: ms, holdingFloor: ms })
const HOSTED_SWEEPS: Sweep[] = [
  { name: 'plainly complete words (complete)', points: steps(200, 500, 50), at: (ms) => ({ ...HOSTED_WAITS, complete: ms }), current: HOSTED_WAITS.complete },
  { name: 'a statement closed by a full stop (statement)', points: steps(200, 900, 100), at: (ms) => ({ ...HOSTED_WAITS, statement: ms }), current: HOSTED_WAITS.statement },
  { name: 'a question with no question mark, bare words (question)', points: steps(300, 900, 100), at: (ms) => ({ ...HOSTED_WAITS, question: ms }), current: HOSTED_WAITS.question },
  { name: 'a number (number)', points: steps(400, 900, 100), at: (ms) => ({ ...HOSTED_WAITS, number: ms }), current: HOSTED_WAITS.number },
  { name: 'words with no sign either way, whatever the voice (neutral = falling = holding = unknown)', points: steps(500, 1_200, 100), at: voiceAt, current: HOSTED_WAITS.neutral },
  { name: 'of those, the voice falls (falling)', points: steps(200, 1_000, 200), at: (ms) => ({ ...HOSTED_WAITS, falling: ms }), current: HOSTED_WAITS.falling },
]

const columns = (s: { all: Summary } & Partial<Record<string, Summary>>) =>
  `all ${brief(s.all)} | espeak-ng ${s['espeak-ng'] ? brief(s['espeak-ng']) : '   n/a'} | flite ${s.flite ? brief(s.flite) : '   n/a'}`

function printMode(observed: Observed[], words: Words, cues: boolean, waits: TurnWaits, title: string, verbose: boolean): void {
  const judged = observed.map((o) => judge(o, words, cues, waits))
  const s = bySynth(judged)
  console.log(`\npatience ${PATIENCE.waitMs ?? PATIENCE.level}, ${title}: ${judged.length} turn cases`)
  console.log(`  false cut-offs: ${s.all.cutCases} of ${s.all.paused} turns with a pause inside, ${s.all.pausesCut} of ${s.all.pauses} pauses`)
  console.log(`  cut-off %, complete-turn wait p50/p95 ms: ${columns(s)}`)
  console.log(`  by family (cases cut): ${[...s.all.families].map(([f, n]) => `${f} ${n.cut}/${n.of}`).join(', ')}`)
  if (verbose) for (const j of judged) console.log(`    ${j.o.c.id} ${j.o.c.voice} ${j.o.c.rate}: ${j.why.join('; ')}`)
}

function printCurve(observed: Observed[], profile: string, words: Words[], sweeps: Sweep[]): void {
  console.log(`\ncurve, ${profile} profile (${words.join(' | ')}): false cut-offs (turns with a pause inside) and complete-turn wait p50/p95, one wait swept, the rest at the defaults`)
  for (const sweep of sweeps) {
    console.log(`  ${sweep.name}`)
    for (const ms of withDefault(sweep.points, sweep.current)) {
      const cells = words.map((w) => columns(bySynth(observed.map((o) => judge(o, w, true, sweep.at(ms))))))
      console.log(`    ${String(ms).padStart(5)} ms  ${cells.join('  ||  ')}${ms === sweep.current ? '  ← default' : ''}`)
    }
  }
}

export function rulesOnCorpus(synths: Synths, verbose: boolean): void {
  const cases = CORPUS.map((c, i) => ({ c, i })).filter((x): x is { c: TurnCase; i: number } => x.c.kind === 'turn' && canSay(synths, x.c.voice))
  const observed = cases.map(({ c, i }) => observe(c, render(synths, c.pieces, c.voice, c.rate, 1_000 + i)))
  console.log(`bench:turn-rules — ${observed.length} turn cases; a turn that trails off waits ${TRAILING_WAIT_MS} ms (voice.endpointingMs)`)
  console.log(`local waits ${JSON.stringify(LOCAL_WAITS)}`)
  console.log(`hosted waits ${JSON.stringify(HOSTED_WAITS)}`)
  for (const m of MODES) printMode(observed, m.words, m.cues, m.waits, m.title, verbose)
  console.log(`\ncurve, local profile, no voice: ${FIXED.name}`)
  for (const ms of FIXED.points) console.log(`    ${String(ms).padStart(5)} ms  ${columns(bySynth(observed.map((o) => judge(o, 'none', false, FIXED.at(ms)))))}`)
  printCurve(observed, 'local', ['none'], LOCAL_SWEEPS)
  printCurve(observed, 'hosted', ['punctuated', 'bare'], HOSTED_SWEEPS)
}

if (import.meta.main) {
  const synths = findSynths('bench:turn-rules')
  if (!synths) process.exit(2)
  rulesOnCorpus(synths, process.env.BENCH_VERBOSE === '1')
}
