/**
 * Deliveries of one subject (a call, a conversation: events/catalogue.ts subjectOf) to one endpoint
 * go out one after another, in the order their events were dispatched; other subjects' deliveries
 * to the same endpoint keep going out in parallel beside them (docs/api/webhooks.md "Order").
 *
 * A delivery is written with `after`: the deliveries of its (endpoint, subject) still owed when it
 * was, all dispatched before it. Before it enters the endpoint's lane it waits until none of them
 * is owed any longer. The list is stored with the delivery, so the order holds across a kill -9, a
 * restart and another instance taking the work over: a predecessor owed by a dead instance holds
 * its successors until it is taken over and settled.
 *
 * A predecessor running in this process is awaited directly, and one about to run here (its record
 * being committed) until it starts; one elsewhere (another instance, or waiting for a takeover, or
 * between legacy retries) is looked up in the store every POLL_MS.
 */

// A predecessor that is not running here settles on another instance, after a takeover (up to
// PRESENCE_TTL_MS, 20 s) or a legacy retry (30 s at the soonest): a look a second adds at most a
// second to what follows it, for one read by id per waiting delivery.
const POLL_MS = 1_000

export class SubjectTurns {
  /** Deliveries running in this process, by id: settled when their attempt (or their refusal) is. */
  private readonly running = new Map<string, Promise<unknown>>()

  /** Successors waiting for a delivery owed here to start (its record still being committed), by id. */
  private readonly waiting = new Map<string, (() => void)[]>()

  /** `id` will not run here after all (its record was not committed): whoever waits for it to start looks again. */
  forget(id: string): void {
    this.wake(id)
  }

  /** Marks `id` as running here until `work` settles; returns `work`. */
  track<T>(id: string, work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => {},
      () => {},
    )
    this.running.set(id, settled)
    this.wake(id)
    void settled.then(() => {
      if (this.running.get(id) === settled) this.running.delete(id)
    })
    return work
  }

  /**
   * Resolves true once no delivery in `after` is owed (`owed(id)` reads the store, or answers
   * `here`: owed by this process, about to start), false if `stopped()` turns true first (shutting
   * down: the delivery stays owed, for whoever takes it over).
   */
  async wait(after: readonly string[], owed: (id: string) => Promise<boolean | 'here'>, stopped: () => boolean): Promise<boolean> {
    for (const id of after) {
      for (;;) {
        if (stopped()) return false
        const here = this.running.get(id)
        if (here) {
          await here
          continue
        }
        const state = await owed(id)
        if (!state) break
        if (this.running.has(id)) continue
        // Woken when it starts, or when it will not; POLL_MS at most, should the answer be stale.
        await new Promise<void>((done) => {
          if (state !== 'here') return void setTimeout(done, POLL_MS)
          const started = () => {
            clearTimeout(timer)
            done()
          }
          const timer = setTimeout(() => {
            const left = (this.waiting.get(id) ?? []).filter((w) => w !== started)
            if (left.length) this.waiting.set(id, left)
            else this.waiting.delete(id)
            done()
          }, POLL_MS)
          this.waiting.set(id, [...(this.waiting.get(id) ?? []), started])
        })
      }
    }
    return !stopped()
  }

  private wake(id: string): void {
    const waiting = this.waiting.get(id)
    if (!waiting) return
    this.waiting.delete(id)
    for (const started of waiting) started()
  }
}

/** The key a delivery's turn is kept under: its endpoint and its event's subject. */
export const turnKey = (endpointId: string, subject: string): string => `${endpointId}|${subject}`
