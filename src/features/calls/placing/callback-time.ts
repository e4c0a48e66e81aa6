/**
 * When a callback should ring, from what the customer said ("tomorrow at 3pm", "Monday 10:30",
 * "in two hours", or an ISO 8601 time) read in the workspace's time zone (docs/spec.md Customer: an
 * IANA `timezone`). Parsing words is chrono-node's; the zone is applied as the offset it has at
 * the time asked (its own zone support takes abbreviations, not IANA names), so a time across a
 * daylight-saving change still lands on the wall-clock hour the customer meant.
 */
import * as chrono from 'chrono-node'
import { localTime, offsetAt } from '../../../zoned-time'

export type CallbackTime = { at: number; local: string } | { refused: string }

const MINUTE_MS = 60_000

function parseAt(when: string, now: number, offsetMs: number) {
  const [found] = chrono.parse(when, { instant: new Date(now), timezone: Math.round(offsetMs / MINUTE_MS) }, { forwardDate: true })
  return found ?? null
}

export function callbackTime(when: string, zone: string, now: number): CallbackTime {
  let found = parseAt(when, now, offsetAt(now, zone))
  if (!found) return { refused: `"${when}" is not a time I can book; ask the customer for a day and a time` }
  // A day with no hour ("tomorrow", "Friday afternoon") is not a time to ring someone.
  if (!found.start.isCertain('hour')) return { refused: `"${when}" has no time of day; ask the customer what time suits them` }
  if (!found.start.isCertain('timezoneOffset')) {
    const offset = offsetAt(found.start.date().getTime(), zone)
    if (offset !== offsetAt(now, zone)) found = parseAt(when, now, offset) ?? found
  }
  const at = found.start.date().getTime()
  const l = localTime(at, zone)
  return { at, local: `${l.day} ${String(l.hour).padStart(2, '0')}:${String(l.minute).padStart(2, '0')} (${zone})` }
}
