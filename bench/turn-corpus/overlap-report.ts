/**
 * bench:turn-taking's account of what speech over the agent cost the caller (issue 46): the agent
 * goes quiet at once, then answers only a turn. From each overlap case's line log and transcript
 * (line-judge.ts `judge`).
 */
import { percentile } from '../stats'
import type { Judged } from './line-judge'

/** The corpus's one-word interruptions (cases.ts): never to pass for a backchannel. */
const ONE_WORD = new Set(['Stop.', 'No.', 'Wait.', 'Hold on.'])
/** The targets: none answered, none missed, quiet within 300 ms p95 of the first speech frame, resumed within 1.5 s p95 of a backchannel's end. */
const TARGET = { answeredBackchannels: 0, quietP95: 300, resumedP95: 1_500 }

const spread = (xs: number[]) => (xs.length ? `p50 ${Math.round(percentile(xs, 50))} ms, p95 ${Math.round(percentile(xs, 95))} ms (n ${xs.length})` : 'n/a')
const rate = (n: number, of: number) => (of ? `${n} of ${of} (${((100 * n) / of).toFixed(1)}%)` : 'n/a')
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')
const byFamily = (xs: Judged[], bad: (j: Judged) => boolean) =>
  [...new Set(xs.map((j) => j.c.family))].map((f) => `${f} ${xs.filter((j) => j.c.family === f && bad(j)).length}/${xs.filter((j) => j.c.family === f).length}`).join(', ')

/** `others`: the backchannel, noise and echo cases; `interruptions`; `judged`: every case. */
export function overlapReport(others: Judged[], interruptions: Judged[], judged: Judged[]): void {
  // What speech over the agent cost the caller: it goes quiet at once, then answers only a turn.
  const answeredOthers = others.filter((j) => j.answered)
  const oneWord = interruptions.filter((j) => j.c.pieces.some((p) => 'say' in p && ONE_WORD.has(p.say)))
  const oneWordMissed = oneWord.filter((j) => !j.stopped || !j.answered)
  const quiet = judged.filter((j) => j.c.kind === 'overlap' && j.c.label !== 'echo' && j.stopped && j.clearMs !== null).map((j) => j.clearMs!)
  const resumed = others.filter((j) => j.resumedMs != null).map((j) => j.resumedMs!)
  console.log(
    `backchannels, noises and echoes answered as a turn: ${rate(answeredOthers.length, others.length)} (${byFamily(others, (j) => !!j.answered)}) — target ${TARGET.answeredBackchannels}: ${verdict(answeredOthers.length === 0 && others.length > 0)}`,
  )
  console.log(
    `interruptions not answered as a turn: ${rate(interruptions.filter((j) => !j.answered).length, interruptions.length)}; one-word interruptions missed (not stopped, or not answered): ${rate(oneWordMissed.length, oneWord.length)} — target 0: ${verdict(oneWordMissed.length === 0 && oneWord.length > 0)}`,
  )
  console.log(
    `agent quiet after the caller's first speech frame (a clear, any speech that stopped it): ${spread(quiet)} — target p95 ≤ ${TARGET.quietP95} ms: ${verdict(quiet.length > 0 && percentile(quiet, 95) <= TARGET.quietP95)}`,
  )
  console.log(
    `resumed (audible again) after a backchannel's last speech frame: ${spread(resumed)}; stopped and resumed ${resumed.length}, stopped and not resumed ${others.filter((j) => j.stopped && !j.answered && j.resumedMs == null).length} — target p95 ≤ ${TARGET.resumedP95} ms: ${verdict(resumed.length > 0 && percentile(resumed, 95) <= TARGET.resumedP95)}`,
  )
}
