/**
 * Waiting for an actor's outcome (ActorRuntime.settle and reach): a route that sent an event or
 * spawned an actor answers once the effect it started has run, or once the snapshot shows what the
 * route waits for. Works whichever instance holds the actor: one held here is watched through its
 * own snapshots; any other is read from the store.
 */
import { type Clock, systemClock } from '../src/clock'
import { ActorNotFoundError, ActorUnavailableError } from './errors'
import { idleOrTimeout } from './idle'
import type { LiveActor } from './live-actor'
import type { SettledWhen, SnapshotView, StoredActor } from './types'

// settle(): an HTTP route waits this long for an actor's effect before answering 503 (retry):
// our effects are a few store writes, milliseconds each; 10 s covers a loaded store.
export const SETTLE_TIMEOUT_MS = 10_000
// settle() polls the stored snapshot (so it works whichever instance runs the actor): first
// after 2 ms, doubling to at most 50 ms, so a quick effect answers fast and a slow one costs
// at most 20 reads a second.
const SETTLE_FIRST_POLL_MS = 2
const SETTLE_MAX_POLL_MS = 50

/** One actor as the waiting sees it. */
export interface SettleTarget {
  key: string
  /** The actor when this instance holds it in memory. */
  live: LiveActor | undefined
  /** Its stored document. */
  stored(): Promise<StoredActor | null>
  /** Its stored document as this instance last wrote it, while it holds the actor (null otherwise: read the store). */
  held(): StoredActor | null
  /** Resolves once every job queued for it so far (the flush its last change queued) has run. */
  drained(): Promise<unknown>
  /** Times the wait and its polls; the system clock unless given (a store write takes host time). */
  clock?: Pick<Clock, 'after'>
}

/**
 * Waits until the stored snapshot records no effect in flight (or, with `until`, shows what the
 * caller waits for), then returns it. ActorNotFoundError when it does not exist,
 * ActorUnavailableError on timeout.
 */
export async function settled(target: SettleTarget, timeoutMs = SETTLE_TIMEOUT_MS, until?: SettledWhen): Promise<StoredActor> {
  const { key, live } = target
  const clock = target.clock ?? systemClock
  // The deadline is a wait of its own: a poll's sleep ends at it, and the store is read once more.
  let over = false
  let overNow = () => {}
  const deadline = new Promise<void>((resolve) => (overNow = resolve))
  const stopWait = clock.after(timeoutMs, () => {
    over = true
    overNow()
  })
  try {
    // Held here: wait for its effects by its own snapshots, then for the flush they queued, instead
    // of polling the store (an actor just spawned by this instance settles in one effect's time).
    if (live) {
      await idleOrTimeout(live, timeoutMs, until ? () => until(live.actor.getSnapshot() as SnapshotView) : undefined, clock)
      await target.drained()
    }
    let wait = SETTLE_FIRST_POLL_MS
    for (;;) {
      // Held here: what this instance last stored is what the store holds (nobody else writes it).
      const doc = target.held() ?? (await target.stored())
      if (!doc) throw new ActorNotFoundError(`${key} does not exist`)
      if (!doc.pendingWork || until?.(doc.snapshot as SnapshotView)) return doc
      if (over) throw new ActorUnavailableError(`${key} did not settle within ${timeoutMs} ms`)
      let stopPoll = () => {}
      await Promise.race([new Promise<void>((resolve) => (stopPoll = clock.after(wait, resolve))), deadline])
      stopPoll()
      wait = Math.min(wait * 2, SETTLE_MAX_POLL_MS)
    }
  } finally {
    stopWait()
  }
}

/**
 * Waits until the actor's snapshot shows what `until` waits for, or no effect is in flight, and
 * returns that snapshot — the live one where this instance holds the actor, without waiting for
 * it to be stored (the actor stores it in turn); the stored one otherwise. For a route that
 * answers from an effect's outcome and need not hold its answer for the write that records it
 * (a crash before that write re-runs the effect at boot, as it would have anyway).
 */
export async function reached(target: SettleTarget, until: SettledWhen, timeoutMs = SETTLE_TIMEOUT_MS): Promise<SnapshotView> {
  const { live } = target
  if (!live) return (await settled(target, timeoutMs, until)).snapshot as SnapshotView
  const view = () => live.actor.getSnapshot() as SnapshotView
  await idleOrTimeout(live, timeoutMs, () => until(view()), target.clock)
  if (!until(view()) && live.busy()) throw new ActorUnavailableError(`${target.key} did not settle within ${timeoutMs} ms`)
  return view()
}
