/**
 * Delivering one event to one actor, wherever it is: through the actor's serial queue (events to
 * one actor run strictly in order), to the actor held here (resumed from its stored snapshot if
 * need be) or forwarded to the instance that holds its lease (forwarding.ts). An owner that does
 * not answer has died or stalled: the event waits for its lease to lapse and is then delivered
 * here, so a report that reaches another instance meanwhile is not lost.
 */
import type { EventObject } from 'xstate'
import { type Clock, systemClock } from '../src/clock'
import { type Dispatched, notHandled, sendJudged } from './ask'
import { ActorUnavailableError, ForwardTimeoutError } from './errors'
import type { Forwarded, Forwarder, ForwardRequest } from './forwarding'
import type { ActorLeases } from './leases'
import { fromView, type Residency } from './residency'
import type { SerialQueue } from './serial-queue'
import { actorKey } from './snapshot-store'
import type { Registration } from './types'

// One hop reaches the owner; a second covers an owner that passivated and lost the lease between
// our look-up and its receipt. More means leases are flapping: the caller should retry.
const MAX_FORWARD_HOPS = 2
// How often a sender whose forward went unanswered looks whether the silent owner's lease lapsed:
// a few looks a second, against a 15 s lease (leases.ts).
const LAPSE_POLL_MS = 250

export interface DispatcherParts {
  queue: SerialQueue
  leases: ActorLeases
  residency: () => Residency
  forwarder: () => Forwarder
  registration: (kind: string) => Registration
  /** The runtime is handing its actors over: it waits for no one. */
  draining: () => boolean
  /** Times the wait for a silent owner's lease to lapse; the system clock unless given (a lease lapses in host time). */
  clock?: Pick<Clock, 'after'>
}

export class Dispatcher {
  constructor(private readonly d: DispatcherParts) {}

  /** `judge`: an ask, whose answer says whether the chart refused this event (ask.ts). */
  dispatch(reg: Registration, id: string, event: EventObject, input: unknown, hops: number, judge: boolean): Promise<Dispatched> {
    const key = actorKey(reg.kind, id)
    const residency = this.d.residency()
    // Reached synchronously from send(), so calls enter the queue in the order they were made.
    const result = this.d.queue.run(key, async (): Promise<Dispatched> => {
      for (let waited = false; ; ) {
        const target = await residency.acquire(reg, id, key, input)
        if (target.type === 'final') return { snapshot: target.snapshot, refusal: judge ? notHandled(event, target.snapshot) : null }
        if (target.type === 'remote') {
          if (hops >= MAX_FORWARD_HOPS) throw new ActorUnavailableError(`${key}: ownership kept moving; retry`)
          try {
            const answer = await this.d.forwarder().request(target.owner, { kind: reg.kind, id, event, hops: hops + 1, judge })
            return { snapshot: fromView(reg, answer.view), refusal: answer.refusal }
          } catch (err) {
            // Its lease lapses within the lease's ttl and the actor is then resumed here from its
            // stored snapshot (a phone network's report reaching a dead instance's call).
            if (waited || !(err instanceof ForwardTimeoutError) || !(await this.lapsed(key, target.owner))) throw err
            waited = true
            continue
          }
        }
        target.live.touch()
        const refusal = sendJudged(target.live.actor, event, judge)
        return { snapshot: await residency.persist(reg, target.live, event), refusal }
      }
    })
    const after = () => residency.afterJob(reg, key)
    result.then(after, after)
    return result
  }

  /** An event another instance forwarded here. */
  async answer(req: ForwardRequest): Promise<Forwarded> {
    const { snapshot: snap, refusal } = await this.dispatch(this.d.registration(req.kind), req.id, req.event, undefined, req.hops, req.judge === true)
    return { view: { value: snap.value, context: snap.context, status: snap.status, output: snap.output }, refusal }
  }

  /** Whether `owner`'s lease on `key` lapses (or moves) within one lease ttl; false once the runtime drains. */
  private async lapsed(key: string, owner: string): Promise<boolean> {
    const { leases, draining } = this.d
    const clock = this.d.clock ?? systemClock
    let over = false
    const stopWait = clock.after(leases.ttlMs, () => (over = true))
    try {
      while (!draining() && !over) {
        if ((await leases.ownerOf(key)) !== owner) return true
        await new Promise<void>((r) => clock.after(LAPSE_POLL_MS, r))
      }
    } finally {
      stopWait()
    }
    return !draining() && (await leases.ownerOf(key)) !== owner
  }
}
