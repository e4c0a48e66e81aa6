/** Waiting for a live actor to have no effect in flight (ActorRuntime.settle). */
import { type Clock, systemClock } from '../src/clock'

/**
 * Resolves once the live actor has no effect in flight (or stopped), or `ready()` says what the
 * caller waits for has happened already (ActorRuntime.settle's `until`), or after `timeoutMs`.
 */
export function idleOrTimeout(
  live: { busy(): boolean; actor: { subscribe(o: { next(): void; error(): void; complete(): void }): { unsubscribe(): void } } },
  timeoutMs: number,
  ready: () => boolean = () => false,
  clock: Pick<Clock, 'after'> = systemClock,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false
    // Declared first: subscribing to an actor that already finished or failed calls back at once.
    let sub: { unsubscribe(): void } | undefined
    const finish = () => {
      if (done) return
      done = true
      stopWait()
      sub?.unsubscribe()
      resolve()
    }
    const stopWait = clock.after(timeoutMs, finish)
    sub = live.actor.subscribe({ next: () => (!live.busy() || ready()) && finish(), error: finish, complete: finish })
    if (done) sub.unsubscribe()
    else if (!live.busy() || ready()) finish()
  })
}
