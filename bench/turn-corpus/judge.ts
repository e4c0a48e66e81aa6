/**
 * The end-of-turn rules on what observe.ts kept, for one set of waits: each pause shorter than its
 * wait is let be, a longer one is a false cut-off; the wait after the last word is the
 * complete-turn wait. Summed per synthesiser family (cases.ts), so a rule that suits one voice
 * and not the other shows.
 */
import { DEFAULT_DIALS, PATIENCE_LEVELS, withPatience } from '../../src/voice/dials'
import { endOfTurn, TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import type { TurnWaits } from '../../src/voice/turn-waits'
import { percentile } from '../stats'
import { type Synth, synthOf } from './cases'
import type { Observed, Words } from './observe'

export interface Judged {
  o: Observed
  cut: boolean[]
  endWaitMs: number
  why: string[]
}

/** An agent's `voice.patience` (BENCH_PATIENCE=quick|normal|patient, or a wait in ms): normal unless given. */
export const PATIENCE = ((p = process.env.BENCH_PATIENCE) => {
  const level = PATIENCE_LEVELS.find((l) => l === p)
  return level ? { level, waitMs: null } : p ? { level: 'normal' as const, waitMs: Number(p) } : DEFAULT_DIALS.patience
})()

export function judge(o: Observed, words: Words, cues: boolean, waits: TurnWaits): Judged {
  const cut: boolean[] = []
  const why: string[] = []
  let endWaitMs = 0
  for (const a of o.asked) {
    const j = withPatience(endOfTurn(a.text[words], TRAILING_WAIT_MS, cues ? a.cues : undefined, waits), PATIENCE, words !== 'none')
    if (a.pauseMs === null) {
      endWaitMs = j.waitMs
      why.push(`end: wait ${j.waitMs} (${j.why})`)
    } else {
      cut.push(j.waitMs < a.pauseMs)
      why.push(`${Math.round(a.pauseMs)} ms pause: wait ${j.waitMs} (${j.why})`)
    }
  }
  return { o, cut, endWaitMs, why }
}

export interface Summary {
  /** Cases with a pause inside (unfinished, and complete with short pauses) and those cut at one. */
  paused: number
  cutCases: number
  pausesCut: number
  pauses: number
  /** The complete cases' waits after their last word. */
  waits: number[]
  /** Unfinished cases cut, by family. */
  families: Map<string, { cut: number; of: number }>
}

export function summarise(js: Judged[]): Summary {
  const paused = js.filter((j) => j.cut.length > 0)
  const families = new Map<string, { cut: number; of: number }>()
  for (const j of paused) {
    const f = families.get(j.o.c.family) ?? { cut: 0, of: 0 }
    f.of++
    if (j.cut.some(Boolean)) f.cut++
    families.set(j.o.c.family, f)
  }
  return {
    paused: paused.length,
    cutCases: paused.filter((j) => j.cut.some(Boolean)).length,
    pausesCut: paused.reduce((n, j) => n + j.cut.filter(Boolean).length, 0),
    pauses: paused.reduce((n, j) => n + j.cut.length, 0),
    waits: js.filter((j) => j.o.c.label === 'complete').map((j) => j.endWaitMs),
    families,
  }
}

/** The summary of every case, and of each synthesiser family's. */
export function bySynth(js: Judged[]): { all: Summary } & Partial<Record<Synth, Summary>> {
  const out: { all: Summary } & Partial<Record<Synth, Summary>> = { all: summarise(js) }
  for (const s of ['espeak-ng', 'flite'] as const) {
    const mine = js.filter((j) => synthOf(j.o.c.voice) === s)
    if (mine.length) out[s] = summarise(mine)
  }
  return out
}

export const cutRate = (s: Summary) => (s.paused ? (100 * s.cutCases) / s.paused : 0)
export const p50 = (s: Summary) => (s.waits.length ? percentile(s.waits, 50) : 0)
export const p95 = (s: Summary) => (s.waits.length ? percentile(s.waits, 95) : 0)
/** "12.5% 420/900": the false cut-off rate, then the complete-turn wait p50/p95. */
export const brief = (s: Summary) => `${cutRate(s).toFixed(1).padStart(5)}% ${String(Math.round(p50(s))).padStart(4)}/${String(Math.round(p95(s))).padStart(4)}`
