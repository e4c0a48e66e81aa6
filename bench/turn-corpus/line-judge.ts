/**
 * bench:turn-taking's verdicts on one case from what crossed the line and the API (judge), and the
 * figures of one profile's run against its targets (report), each synthesiser family apart.
 */
import { AUDIBLE_DBFS, type LineLog } from '../../test/support/twilio-line'
import { loadavg } from '../proc'
import { percentile } from '../stats'
import { type Case, synthOf } from './cases'
import { overlapReport } from './overlap-report'

/** After an overlap: a clear later than 500 ms after the caller's last frame is a missed barge-in; a second more shows a late false one. */
export const OVERLAP_AFTER_MS = 1_500
export const MISSED_AFTER_MS = 500

export interface Targets {
  /** False cut-offs, % of turns with a pause inside. */
  cutOff: number
  /** Complete-turn wait p50 (ms), or null: none set for this profile. */
  waitP50: number | null
  falseBargeIn: number
  missed: number
  clearP95: number
}

export interface Judged {
  c: Case
  /** Turn cases: taken as done at a pause inside it; the endpointing of its last pause; the caller's last frame → agent audio. */
  cutOff?: boolean
  /** The service took the caller's words at all (a caller line, an answer, or a cut-off). */
  heard?: boolean
  waitMs?: number | null
  answerMs?: number | null
  /** Overlap cases: the agent stopped (a clear), and how long after the caller's first speech frame. */
  stopped?: boolean
  clearMs?: number | null
  /** Overlap cases: the speech was answered as a turn (a caller line); the agent's audio came back this long after the caller's last frame. */
  answered?: boolean
  resumedMs?: number | null
  note: string
}

export function judge(c: Case, log: LineLog, call: any): Judged {
  const first = log.callerFrames.find((f) => f.speech)?.at ?? null
  const last = log.callerFrames.findLast((f) => f.speech)?.at ?? null
  if (c.kind === 'overlap') {
    // An echo-only case has no caller speech: any clear at all stopped the agent for its own voice.
    const from = first ?? 0
    const clear = log.clears.find((at) => at >= from - 20) ?? null
    const stopped = clear !== null && (last === null || clear <= last + OVERLAP_AFTER_MS)
    const inTime = clear !== null && last !== null && clear <= last + MISSED_AFTER_MS
    const answered = (call?.transcript ?? []).some((l: any) => l.speaker === 'customer')
    const again = stopped && !answered && last !== null ? log.media.find((m) => m.at > last && m.dbfs > AUDIBLE_DBFS) : undefined
    return {
      c,
      stopped: c.label === 'interruption' ? inTime : stopped,
      clearMs: clear !== null && first !== null ? clear - first : null,
      answered,
      resumedMs: again && last !== null ? again.at - last : null,
      note: `${clear === null ? 'no clear' : `clear ${Math.round(clear - (first ?? clear))} ms after the first speech frame`}; ${answered ? 'answered as a turn' : again ? `resumed ${Math.round(again.at - last!)} ms after the caller's last frame` : 'not answered, not resumed'}`,
    }
  }
  if (first === null || last === null) throw new Error('the caller sent no speech frame')
  const agentOver = log.media.filter((m) => m.at > first && m.at <= last && m.dbfs > AUDIBLE_DBFS).length
  const clearsOver = log.clears.filter((at) => at > first && at <= last + 300).length
  const customerLines = (call?.transcript ?? []).filter((l: any) => l.speaker === 'customer')
  const turns: any[] = call?.latencyTurns ?? []
  const answer = log.media.find((m) => m.at > last && m.dbfs > AUDIBLE_DBFS)
  const cutOff = agentOver > 0 || clearsOver > 0 || customerLines.length > 1
  return {
    c,
    cutOff,
    heard: cutOff || customerLines.length > 0 || turns.length > 0 || answer !== undefined,
    waitMs: turns.length ? turns.at(-1).endpointingMs : null,
    answerMs: answer ? answer.at - last : null,
    note: `${cutOff ? 'CUT OFF: ' : ''}agent audio over the turn ${agentOver * 20} ms, clears ${clearsOver}, caller lines ${JSON.stringify(customerLines.map((l: any) => l.text))}, endpointing ${JSON.stringify(turns.map((t) => t.endpointingMs))}`,
  }
}

const spread = (xs: number[]) => (xs.length ? `p50 ${Math.round(percentile(xs, 50))} ms, p95 ${Math.round(percentile(xs, 95))} ms (n ${xs.length})` : 'n/a')
const rate = (n: number, of: number) => (of ? `${n} of ${of} (${((100 * n) / of).toFixed(1)}%)` : 'n/a')
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')

export function report(profile: string, judged: Judged[], failed: number, total: number, target: Targets): void {
  const unheard = judged.filter((j) => j.c.kind === 'turn' && !j.heard)
  const turnCases = judged.filter((j) => j.c.kind === 'turn' && j.heard)
  // Every turn with a pause inside: the unfinished ones, and the complete ones with a short pause (a cut there is as false).
  const paused = turnCases.filter((j) => j.c.pieces.some((p) => 'pauseMs' in p))
  const completes = turnCases.filter((j) => j.c.label === 'complete')
  const cut = paused.filter((j) => j.cutOff)
  const waitsOf = (xs: Judged[]) => xs.filter((j) => !j.cutOff && j.waitMs != null).map((j) => j.waitMs!)
  const waits = waitsOf(completes)
  const answers = turnCases.filter((j) => !j.cutOff && j.answerMs != null).map((j) => j.answerMs!)
  const unanswered = turnCases.filter((j) => j.waitMs == null).length
  const others = judged.filter((j) => j.c.kind === 'overlap' && j.c.label !== 'interruption')
  const falseStops = others.filter((j) => j.stopped)
  const interruptions = judged.filter((j) => j.c.label === 'interruption')
  const missed = interruptions.filter((j) => !j.stopped)
  const clears = interruptions.filter((j) => j.stopped && j.clearMs !== null).map((j) => j.clearMs!)
  const cutRate = paused.length ? (100 * cut.length) / paused.length : Number.NaN
  const falseRate = others.length ? (100 * falseStops.length) / others.length : Number.NaN
  const byFamily = (xs: Judged[], bad: (j: Judged) => boolean) =>
    [...new Set(xs.map((j) => j.c.family))].map((f) => `${f} ${xs.filter((j) => j.c.family === f && bad(j)).length}/${xs.filter((j) => j.c.family === f).length}`).join(', ')
  console.log(`\n${profile}:`)
  if (paused.length) {
    console.log(`false cut-offs (turns with a pause inside taken as done at one): ${rate(cut.length, paused.length)} — target ≤ ${target.cutOff}%: ${verdict(cutRate <= target.cutOff)}`)
    console.log(`  by family: ${byFamily(paused, (j) => !!j.cutOff)}; complete turns split: ${completes.filter((j) => j.cutOff).length} of ${completes.length}`)
  }
  if (completes.length) {
    const goal = target.waitP50 === null ? '' : ` — target p50 ≤ ${target.waitP50} ms: ${verdict(waits.length > 0 && percentile(waits, 50) <= target.waitP50)}`
    console.log(`complete-turn wait (caller's last speech → turn over, the service's endpointing), complete cases: ${spread(waits)}${goal}`)
    console.log(`  turns with a pause inside, not cut: ${spread(waitsOf(paused))}`)
    console.log(`  caller's last speech frame → the agent's first audible audio, at the caller: ${spread(answers)}; turns never answered: ${unanswered}`)
  }
  for (const synth of ['espeak-ng', 'flite'] as const) {
    const mine = (xs: Judged[]) => xs.filter((j) => synthOf(j.c.voice) === synth)
    if (mine(turnCases).length) console.log(`  ${synth}: false cut-offs ${rate(mine(cut).length, mine(paused).length)}; complete-turn wait ${spread(waitsOf(mine(completes)))}`)
  }
  if (others.length) {
    console.log(
      `false barge-ins (the agent stopped for a backchannel, a noise or its own echo): ${rate(falseStops.length, others.length)} — target ≤ ${target.falseBargeIn}%: ${verdict(falseRate <= target.falseBargeIn)}`,
    )
    console.log(`  by family: ${byFamily(others, (j) => !!j.stopped)}`)
  }
  if (interruptions.length) {
    console.log(
      `missed barge-ins (no clear by ${MISSED_AFTER_MS} ms after the caller's last frame): ${rate(missed.length, interruptions.length)} — target ${target.missed}: ${verdict(missed.length === 0)}`,
    )
    console.log(`clear after the interruption's first speech frame: ${spread(clears)} — target p95 ≤ ${target.clearP95} ms: ${verdict(clears.length > 0 && percentile(clears, 95) <= target.clearP95)}`)
  }
  if (others.length || interruptions.length) overlapReport(others, interruptions, judged)
  console.log(`cases judged ${judged.length} of ${total}, failed ${failed}; load average at the end: ${loadavg()}`)
  // A host so loaded that the VAD falls 2 s behind the line drops the caller's frames (MAX_INBOUND_PENDING): nothing above then measures the rules.
  if (unheard.length)
    console.log(
      `turn cases the service never heard (no caller line, no answer; left out above): ${unheard.length} of ${unheard.length + turnCases.length}${unheard.length > turnCases.length ? ' — MOST: the host is too loaded for these numbers to mean anything' : ''}`,
    )
}
