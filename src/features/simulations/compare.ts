/**
 * Two runs of one suite side by side (version comparison): for each call, matched by scenario and
 * instance, whether its status, its expectations' verdicts, its transcript, the fields read from it,
 * the tools the agent called or the time it took to answer a turn differ, with both sides where
 * they do. Pure.
 */
import { TIMING_NOISE_MS } from './model'
import type { ResultDoc, RunDoc } from './repository'

export interface CallDifference {
  scenario: string
  name: string
  instance: number
  status: { a: string; b: string } | null
  expectations: { index: number; kind: string; a: boolean | null; b: boolean | null }[]
  transcript: { a: ResultDoc['transcript']; b: ResultDoc['transcript'] } | null
  fields: { a: Record<string, unknown>; b: Record<string, unknown> } | null
  tools: { a: string[]; b: string[] } | null
  /** The caller's turns (in order) whose answer came more than the noise sooner or later. */
  timings: { index: number; caller: string | null; a: number; b: number; diffMs: number }[]
}

const text = (r: ResultDoc | undefined) => JSON.stringify((r?.transcript ?? []).map((l) => [l.speaker, l.text]))

export function compareRuns(a: { run: RunDoc; results: ResultDoc[] }, b: { run: RunDoc; results: ResultDoc[] }, noiseMs = TIMING_NOISE_MS): { same: boolean; differences: CallDifference[] } {
  const key = (r: ResultDoc) => `${r.scenarioId}#${r.instance}`
  const bByKey = new Map(b.results.map((r) => [key(r), r]))
  const keys = [...new Set([...a.results.map(key), ...b.results.map(key)])]
  const aByKey = new Map(a.results.map((r) => [key(r), r]))
  const differences: CallDifference[] = []
  for (const k of keys) {
    const [ra, rb] = [aByKey.get(k), bByKey.get(k)]
    const any = (ra ?? rb)!
    const count = Math.max(ra?.expectations.length ?? 0, rb?.expectations.length ?? 0)
    const expectations: CallDifference['expectations'] = []
    for (let i = 0; i < count; i++) {
      const [ea, eb] = [ra?.expectations[i], rb?.expectations[i]]
      if (ea?.passed !== eb?.passed) expectations.push({ index: i, kind: (ea ?? eb)!.kind, a: ea?.passed ?? null, b: eb?.passed ?? null })
    }
    const status = ra?.status === rb?.status ? null : { a: ra?.status ?? 'absent', b: rb?.status ?? 'absent' }
    // Words only: the instants of two runs on the system clock always differ.
    const transcript = text(ra) === text(rb) ? null : { a: ra?.transcript ?? [], b: rb?.transcript ?? [] }
    const [fa, fb] = [ra?.fields ?? {}, rb?.fields ?? {}]
    const fields = sameFields(fa, fb) ? null : { a: fa, b: fb }
    const [ta, tb] = [ra?.tools ?? [], rb?.tools ?? []]
    const tools = JSON.stringify(ta) === JSON.stringify(tb) ? null : { a: ta, b: tb }
    const timings = changedTurns(ra, rb, noiseMs)
    if (status || expectations.length || transcript || fields || tools || timings.length)
      differences.push({ scenario: any.scenarioId, name: any.name, instance: any.instance, status, expectations, transcript, fields, tools, timings })
  }
  return { same: differences.length === 0, differences }
}

/** The same fields with the same values, in whatever order the analysis wrote them. */
function sameFields(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => k in b && JSON.stringify(a[k]) === JSON.stringify(b[k]))
}

/** The turns both calls timed whose answer moved by more than `noiseMs`; a turn only one side has shows in the transcript. */
function changedTurns(ra: ResultDoc | undefined, rb: ResultDoc | undefined, noiseMs: number): CallDifference['timings'] {
  const [ta, tb] = [ra?.call?.turns ?? [], rb?.call?.turns ?? []]
  const changed: CallDifference['timings'] = []
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const [a, b] = [ta[i]!.answerMs, tb[i]!.answerMs]
    if (a === null || b === null || Math.abs(b - a) <= noiseMs) continue
    changed.push({ index: i, caller: tb[i]!.caller ?? ta[i]!.caller, a, b, diffMs: b - a })
  }
  return changed
}
