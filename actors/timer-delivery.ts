/**
 * Turning a claimed durable timer into an event for its actor, and deciding whether the pump may
 * ack it. The event is `{ type: 'timer.due', at: now, name }`: `at` is the delivery instant on the
 * service clock, which the machine's guard compares with the deadline in its context.
 */
import type { EventObject } from 'xstate'
import type { ClaimedTimer } from '../src/coordination/port'
import type { Logger } from '../src/logger'
import { type Fired, parseTimerPayload } from './deadlines'
import { ActorNotFoundError, VersionMismatchError } from './errors'
import type { DeliveryOutcome } from './timer-pump'

/** What a machine receives when one of its deadlines' timers fires. */
export interface TimerDueEvent extends EventObject {
  type: 'timer.due'
  at: number
  name: string
}

export interface TimerTarget {
  hasKind(kind: string): boolean
  send(kind: string, id: string, event: EventObject): Promise<unknown>
}

/** The durable timer a `timer.due` event stands for (its deadline name and delivery instant). */
export function firedOf(event: EventObject): Fired | undefined {
  const e = event as { type: string; name?: unknown; at?: unknown }
  if (e.type !== 'timer.due' || typeof e.name !== 'string' || typeof e.at !== 'number') return undefined
  return { name: e.name, at: e.at }
}

export async function deliverTimer(target: TimerTarget, logger: Logger, timer: ClaimedTimer, now: number): Promise<DeliveryOutcome> {
  const p = parseTimerPayload(timer.payload)
  if (!p) {
    logger.warn({ timer: timer.id }, 'durable timer with an unreadable payload dropped')
    return 'ack'
  }
  if (!target.hasKind(p.kind)) {
    // Another instance (e.g. newer, mid-deploy) may know this kind: leave it for its pump.
    logger.warn({ timer: timer.id, kind: p.kind }, 'durable timer for a kind this instance does not run; left for another')
    return 'keep'
  }
  try {
    const event: TimerDueEvent = { type: 'timer.due', at: now, name: p.name }
    await target.send(p.kind, p.id, event)
    return 'ack'
  } catch (err) {
    // Scheduled just before a spawn that never got stored (a crash in between): nothing to wake.
    if (err instanceof ActorNotFoundError) return 'ack'
    // Kept: it is delivered once a migration makes the actor resumable.
    if (err instanceof VersionMismatchError) return 'keep'
    logger.error({ err, timer: timer.id }, 'durable timer delivery failed; retried after its claim lapses')
    return 'keep'
  }
}
