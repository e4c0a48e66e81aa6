/**
 * Calendar arithmetic in a workspace's IANA time zone, with the platform's Intl data (no
 * hand-kept offset tables): which local day and hour an instant falls in, and the instant a
 * local day starts. Call totals bucket by these (docs/spec.md: "Buckets are in the workspace time zone").
 */

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
    formatters.set(zone, f)
  }
  return f
}

export interface LocalTime {
  /** YYYY-MM-DD */
  day: string
  /** 0–23 */
  hour: number
  minute: number
  second: number
}

export function localTime(ms: number, zone: string): LocalTime {
  const parts: Record<string, string> = {}
  for (const p of formatter(zone).formatToParts(new Date(ms))) parts[p.type] = p.value
  return { day: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second) }
}

/** How far the zone's wall clock is ahead of UTC at `ms`, in ms. */
export function offsetAt(ms: number, zone: string): number {
  const l = localTime(ms, zone)
  const [y, m, d] = l.day.split('-').map(Number)
  const wall = Date.UTC(y, m - 1, d, l.hour, l.minute, l.second)
  return wall - (ms - (ms % 1000))
}

/**
 * The first instant of local day `day` (YYYY-MM-DD). Two passes settle a transition between the
 * guess and the answer; a day whose midnight does not exist (a DST jump at 00:00) starts at the
 * first instant that does.
 */
export function startOfLocalDay(day: string, zone: string): number {
  const [y, m, d] = day.split('-').map(Number)
  const wallMidnight = Date.UTC(y, m - 1, d)
  let guess = wallMidnight - offsetAt(wallMidnight, zone)
  guess = wallMidnight - offsetAt(guess, zone)
  // A gap at midnight: the guess lands on the previous local day; step to the first hour of `day`.
  while (localTime(guess, zone).day < day) guess += 15 * 60 * 1000
  return guess
}

/** The local day `n` days after `day` (negative: before), by the calendar. */
export function addDays(day: string, n: number): string {
  const [y, m, d] = day.split('-').map(Number)
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10)
}
