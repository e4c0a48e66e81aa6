/**
 * Deadlines in context → durable timers in the coordination store.
 *
 * One timer per deadline, id `actor:<kind>:<id>:<name>`. The invariant the runtime keeps, across
 * crashes at any point, is: *for every deadline in the stored snapshot there is a timer due no
 * later than it* (or one being delivered right now). Extra or early timers are harmless, because a
 * machine's `timer.due` guard ignores early and stale wake-ups; a missing or late one is not.
 * Hence the order of writes around each persist:
 * - before the snapshot is stored: schedule new deadlines and ones that moved earlier (a crash
 *   after this only leaves an early timer for the old snapshot: ignored);
 * - after it is stored: move later deadlines later and cancel removed ones (a crash before this
 *   leaves an early or stale timer: ignored, and its delivery re-arms what is still pending).
 */
import type { Deadline } from './types'

export const timerId = (kind: string, id: string, name: string): string => `actor:${kind}:${id}:${name}`

export interface TimerPayload {
  kind: string
  id: string
  name: string
  /** The deadline instant the timer was scheduled for. */
  at: number
}

export function parseTimerPayload(payload: unknown): TimerPayload | null {
  if (typeof payload !== 'object' || payload === null) return null
  const p = payload as Partial<TimerPayload>
  if (typeof p.kind !== 'string' || typeof p.id !== 'string' || typeof p.name !== 'string' || typeof p.at !== 'number') {
    return null
  }
  return { kind: p.kind, id: p.id, name: p.name, at: p.at }
}

/** Checks what a kind's `deadlines()` returned: unique names, finite instants. */
export function checkDeadlines(kind: string, list: Deadline[]): Deadline[] {
  const seen = new Set<string>()
  for (const d of list) {
    if (typeof d.name !== 'string' || d.name === '' || !Number.isFinite(d.at)) {
      throw new Error(`${kind}: invalid deadline ${JSON.stringify(d)}`)
    }
    if (seen.has(d.name)) throw new Error(`${kind}: deadline name ${d.name} appears twice`)
    seen.add(d.name)
  }
  return list
}

/** The timer that was just delivered, when the event being processed is a durable wake-up. */
export interface Fired {
  name: string
  /** The instant it was delivered at (the event's `at`). */
  at: number
}

export interface TimerPlan {
  /** Schedule before storing the snapshot (new or earlier deadlines, re-armed fired ones). */
  before: Deadline[]
  /** Schedule after storing it (deadlines that moved later). */
  after: Deadline[]
  /** Cancel after storing it (deadlines no longer present). */
  cancel: string[]
  /** Deadlines already due whose wake-up the machine ignored: re-arming them would spin. */
  ignoredDue: Deadline[]
}

/**
 * What to change in the timers to go from `prev` (the deadlines last stored) to `next`.
 * `fired` is the timer being delivered: the pump acks (deletes) it after this, so if its deadline
 * is still pending and in the future it is scheduled again (the new claim-less timer makes the
 * pump's ack a no-op), and if it is gone nothing needs cancelling.
 */
export function planTimers(prev: Deadline[], next: Deadline[], fired?: Fired): TimerPlan {
  const plan: TimerPlan = { before: [], after: [], cancel: [], ignoredDue: [] }
  const old = new Map(prev.map((d) => [d.name, d.at]))
  for (const d of next) {
    const was = old.get(d.name)
    if (fired && fired.name === d.name) {
      if (d.at > fired.at) plan.before.push(d)
      else plan.ignoredDue.push(d)
    } else if (was === undefined || d.at < was) plan.before.push(d)
    else if (d.at > was) plan.after.push(d)
  }
  const present = new Set(next.map((d) => d.name))
  for (const name of old.keys()) if (!present.has(name) && name !== fired?.name) plan.cancel.push(name)
  return plan
}

/** The earliest instant among deadlines, or null. */
export const earliest = (list: Deadline[]): number | null => (list.length === 0 ? null : list.reduce((min, d) => Math.min(d.at, min), list[0].at))
