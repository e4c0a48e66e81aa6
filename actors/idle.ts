/** Waiting for a live actor to have no effect in flight (ActorRuntime.settle). */

/**
 * Resolves once the live actor has no effect in flight (or stopped), or `ready()` says what the
 * caller waits for has happened already (ActorRuntime.settle's `until`), or after `timeoutMs`.
 */
export function idleOrTimeout(
  live: { busy(): boolean; actor: { subscribe(o: { next(): void; error(): void; complete(): void }): { unsubscribe(): void } } },
  timeoutMs: number,
  ready: () => boolean = () => false,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false
    // Declared first: subscribing to an actor that already finished or failed calls back at once.
    let sub: { unsubscribe(): void } | undefined
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      sub?.unsubscribe()
      resolve()
    }
    const timer = setTimeout(finish, timeoutMs)
    sub = live.actor.subscribe({ next: () => (!live.busy() || ready()) && finish(), error: finish, complete: finish })
    if (done) sub.unsubscribe()
    else if (!live.busy() || ready()) finish()
  })
}
