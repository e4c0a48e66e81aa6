/**
 * Call totals (docs/spec.md "Call totals"): counts, seconds and cost of every try that rang in the last
 * `days` local days, bucketed in the workspace time zone (hourly when `days` is 1).
 *
 * The store groups call rows by a `tally` key written on each row when its try ends —
 * `<UTC quarter-hour>|<direction>|<outcome>|<surface>` — so one aggregation answers any time zone
 * (every zone's offset is a whole number of quarter hours) without loading a call.
 */
import { addDays, localTime, startOfLocalDay } from '../../../zoned-time'

export type CallOutcome = 'answered' | 'missed' | 'failed' | 'cancelled'
export type CallSurface = 'phone' | 'web' | 'chatapp'
export const SURFACES: CallSurface[] = ['phone', 'web', 'chatapp']

const QUARTER_MS = 15 * 60 * 1000

/** The grouping key a call row carries once its try has ended. */
export function tallyKey(startedAtMs: number, direction: 'inbound' | 'outbound', outcome: CallOutcome, surface: CallSurface): string {
  const quarter = new Date(startedAtMs - (startedAtMs % QUARTER_MS)).toISOString().slice(0, 16)
  return `${quarter}|${direction}|${outcome}|${surface}`
}

export interface TallyGroup {
  key: string
  count: number
  seconds: number
  debitMicro: number
}

interface Bucket {
  bucket: string
  inbound: number
  outbound: number
  answered: number
  missed: number
  minutes: number
}

export interface CallTotals {
  days: number
  timezone: string
  grain: 'day' | 'hour'
  calls: number
  inbound: number
  outbound: number
  answered: number
  missed: number
  failed: number
  seconds: number
  debitMicro: number
  surfaces: Record<CallSurface, number>
  series: Bucket[]
}

/** The instant the window opens: local midnight `days - 1` days before today. */
export function totalsWindowStart(days: number, zone: string, nowMs: number): number {
  return startOfLocalDay(addDays(localTime(nowMs, zone).day, -(days - 1)), zone)
}

const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100
const pad = (n: number) => String(n).padStart(2, '0')

export function callTotals(groups: TallyGroup[], days: number, zone: string, nowMs: number): CallTotals {
  const grain = days === 1 ? 'hour' : 'day'
  const today = localTime(nowMs, zone).day
  const labels = grain === 'hour' ? Array.from({ length: 24 }, (_, h) => `${today}T${pad(h)}:00`) : Array.from({ length: days }, (_, i) => addDays(today, i - (days - 1)))
  const series = new Map<string, Bucket & { seconds: number }>(labels.map((l) => [l, { bucket: l, inbound: 0, outbound: 0, answered: 0, missed: 0, minutes: 0, seconds: 0 }]))
  const totals: CallTotals = {
    days,
    timezone: zone,
    grain,
    calls: 0,
    inbound: 0,
    outbound: 0,
    answered: 0,
    missed: 0,
    failed: 0,
    seconds: 0,
    debitMicro: 0,
    surfaces: { phone: 0, web: 0, chatapp: 0 },
    series: [],
  }
  for (const g of groups) {
    const [quarter, direction, outcome, surface] = g.key.split('|')
    const at = Date.parse(`${quarter}:00.000Z`)
    if (!Number.isFinite(at)) continue
    const local = localTime(at, zone)
    const bucket = series.get(grain === 'hour' ? `${local.day}T${pad(local.hour)}:00` : local.day)
    totals.calls += g.count
    totals.seconds += g.seconds
    totals.debitMicro += g.debitMicro
    if (direction === 'inbound' || direction === 'outbound') totals[direction] += g.count
    if (outcome === 'answered' || outcome === 'missed' || outcome === 'failed') totals[outcome] += g.count
    if (surface === 'phone' || surface === 'web' || surface === 'chatapp') totals.surfaces[surface] += g.count
    if (!bucket) continue
    if (direction === 'inbound' || direction === 'outbound') bucket[direction] += g.count
    if (outcome === 'answered' || outcome === 'missed') bucket[outcome] += g.count
    bucket.seconds += g.seconds
  }
  totals.series = [...series.values()].map(({ seconds, ...b }) => ({ ...b, minutes: minutes(seconds) }))
  return totals
}
