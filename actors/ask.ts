/**
 * Asking an actor (ActorRuntime.ask): send an event and learn whether the chart applied it or
 * refused it. The verdict is taken inside the actor's queue job, around the synchronous
 * `actor.send`, where nothing else can move the actor: the refusal answered is the one this
 * event recorded (machines/refusal.ts), never an earlier one nor a concurrent request's. A
 * forwarded ask is judged the same way on the owner, and its verdict travels back in the reply
 * to that request (forwarding.ts, matched by its correlation id).
 */
import type { Actor, AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate'
import { type Refusal, refusalOf, stateOf } from '../machines/refusal'

/**
 * What an ask answers: applied, with the snapshot once stored; or refused, with the refusal this
 * event recorded, or "does not apply" when no handler of its state takes it (as canApplyOn says).
 */
export type Asked<S = AnyMachineSnapshot> = { ok: true; snapshot: S } | { ok: false; refusal: Refusal; snapshot: S }

/** What one event's queue job answers: the stored snapshot, and the refusal it produced when judged. */
export interface Dispatched {
  snapshot: AnyMachineSnapshot
  refusal: Refusal | null
}

const lastRefusalOf = (snapshot: AnyMachineSnapshot): Refusal | null => (snapshot.context as { lastRefusal?: Refusal | null } | undefined)?.lastRefusal ?? null

/**
 * The refusal of an event no handler takes in the snapshot's state, or sent to a finished actor:
 * what canApplyOn answers for it.
 */
export function notHandled(event: EventObject, snapshot: AnyMachineSnapshot): Refusal {
  const state = stateOf(snapshot)
  return refusalOf(event, { state, message: `${event.type} does not apply while ${state}` })
}

/** Sends `event` to a live actor; with `judge`, answers the refusal it produced (null: applied). */
export function sendJudged(actor: Actor<AnyStateMachine>, event: EventObject, judge: boolean): Refusal | null {
  if (!judge) {
    actor.send(event)
    return null
  }
  const before = actor.getSnapshot()
  const handled = before.can(event)
  const prior = lastRefusalOf(before)
  actor.send(event)
  if (!handled) return notHandled(event, before)
  // A chart records a refusal by assigning a new lastRefusal object (refusalOf): a new identity
  // after this synchronous send is this event's.
  const after = lastRefusalOf(actor.getSnapshot())
  return after !== null && after !== prior ? after : null
}
