/**
 * A workspace's call quality over a window (the console's Quality page): answer time per turn
 * (p50/p95), interruptions the agent took and suspected cut-offs (pauses it talked into) per call,
 * transfers by outcome; overall and per bucket (hours over a day, days over a week), each bucket
 * naming its instants so the page can list the calls behind it. Simulated calls are not counted,
 * as in call totals. Computed from the stored tries, newest first, at most QUALITY_MAX_CALLS; the
 * calls refused at capacity from their counts per hour (placing/refusal-counts.ts), most of which have no try.
 */
import type { TurnStages } from '../../../voice/public'
import type { HourRefusals } from '../placing/refusal-counts'
import type { CallTransferRow, CallTryDoc } from './repository'

/**
 * Tries read for one window: a week of a busy workspace (700 calls a day) fits, and a read stays
 * a few MB (a try with its transcript is a few KB); past it the answer says `truncated`.
 */
export const QUALITY_MAX_CALLS = 5_000

export const QUALITY_WINDOWS = { '24h': { ms: 24 * 3_600_000, bucketMs: 3_600_000 }, '7d': { ms: 7 * 86_400_000, bucketMs: 86_400_000 } } as const
export type QualityWindow = keyof typeof QUALITY_WINDOWS

type Outcome = NonNullable<CallTransferRow['outcome']> | 'pending'
const OUTCOMES: Outcome[] = ['answered', 'no_answer', 'busy', 'declined', 'failed', 'pending']

export interface QualityFigures {
  /** Tries that had a media stream (a voice pipeline): the calls the other figures are about. */
  calls: number
  turns: number
  /** The caller heard the answer this long after they stopped speaking (first audio sent when the line echoes no marks), ms. */
  answerMs: { p50: number; p95: number } | null
  interruptions: number
  interruptionsPerCall: number | null
  /** Pauses the agent talked into: the caller went on within 1 s of its answer's first audio. */
  cutOffs: number
  cutOffsPerCall: number | null
  transfers: Record<Outcome, number> & { total: number }
}

/** Calls refused at capacity, by how they came; `calls`: those with a call record (waiting calls that gave up). */
export interface RefusedFigures {
  total: number
  outbound: number
  inbound: number
  web: number
  calls: string[]
}

export interface CallQuality {
  window: QualityWindow
  grain: 'hour' | 'day'
  since: string
  until: string
  /** More tries than QUALITY_MAX_CALLS: the figures cover the newest of them. */
  truncated: boolean
  overall: QualityFigures & { refused: RefusedFigures }
  buckets: (QualityFigures & { since: string; until: string; refused: RefusedFigures })[]
}

function refusedOf(hours: HourRefusals[]): RefusedFigures {
  const r: RefusedFigures = { total: 0, outbound: 0, inbound: 0, web: 0, calls: [] }
  for (const h of hours) {
    r.total += h.refused
    r.outbound += h.directions.outbound
    r.inbound += h.directions.inbound
    r.web += h.directions.web
    r.calls.push(...h.calls)
  }
  return r
}

const answerOf = (t: TurnStages): number | null => t.toFirstHeardMs ?? t.toFirstAudioMs ?? null

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}

const perCall = (n: number, calls: number) => (calls ? Math.round((n / calls) * 100) / 100 : null)

export function figuresOf(rows: CallTryDoc[]): QualityFigures {
  const voiced = rows.filter((r) => r.media)
  const answers = voiced
    .flatMap((r) => (r.latencyTurns ?? []).map(answerOf))
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b)
  const interruptions = voiced.reduce((n, r) => n + (r.overlaps?.taken ?? 0), 0)
  const cutOffs = voiced.reduce((n, r) => n + (r.talkedInto ?? 0), 0)
  const transfers = { total: 0, ...Object.fromEntries(OUTCOMES.map((o) => [o, 0])) } as QualityFigures['transfers'] // cast: every outcome is a key, each set to 0 just above
  for (const r of rows) {
    if (!r.transfer) continue
    transfers.total += 1
    transfers[r.transfer.outcome ?? 'pending'] += 1
  }
  return {
    calls: voiced.length,
    turns: voiced.reduce((n, r) => n + (r.latencyTurns?.length ?? 0), 0),
    answerMs: answers.length ? { p50: quantile(answers, 0.5), p95: quantile(answers, 0.95) } : null,
    interruptions,
    interruptionsPerCall: perCall(interruptions, voiced.length),
    cutOffs,
    cutOffsPerCall: perCall(cutOffs, voiced.length),
    transfers,
  }
}

/** The figures of `rows` (tries created in [since, until), newest first) and of the refusals, overall and per bucket. */
export function callQuality(rows: CallTryDoc[], window: QualityWindow, untilMs: number, truncated: boolean, refused: HourRefusals[] = []): CallQuality {
  const { ms, bucketMs } = QUALITY_WINDOWS[window]
  // Buckets end on a whole hour or UTC day, so a link to one names round instants.
  const end = Math.ceil(untilMs / bucketMs) * bucketMs
  const start = end - ms
  const buckets: CallQuality['buckets'] = []
  for (let from = start; from < end; from += bucketMs) {
    const inside = rows.filter((r) => {
      const at = Date.parse(r.createdAt)
      return at >= from && at < from + bucketMs
    })
    const hours = refused.filter((h) => h.hour >= from && h.hour < from + bucketMs)
    buckets.push({ since: new Date(from).toISOString(), until: new Date(from + bucketMs).toISOString(), ...figuresOf(inside), refused: refusedOf(hours) })
  }
  const overall = { ...figuresOf(rows), refused: refusedOf(refused.filter((h) => h.hour >= start && h.hour < end)) }
  return { window, grain: window === '24h' ? 'hour' : 'day', since: new Date(start).toISOString(), until: new Date(end).toISOString(), truncated, overall, buckets }
}
