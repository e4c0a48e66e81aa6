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
 * A predecessor running in this process is awaited directly; one elsewhere (another instance, or
 * waiting for a takeover, or between legacy retries) is looked up in the store every POLL_MS.
 */

// A predecessor that is not running here settles on another instance, after a takeover (up to
// PRESENCE_TTL_MS, 20 s) or a legacy retry (30 s at the soonest): a look a second adds at most a
// second to what follows it, for one read by id per waiting delivery.
const POLL_MS = 1_000

export class SubjectTurns {
  /** Deliveries running in this process, by id: settled when their attempt (or their refusal) is. */
  private readonly running = new Map<string, Promise<unknown>>()

  /** Deliveries whose dispatch is being committed here, by id: their end, once they run or will not. */
  private readonly expected = new Map<string, () => void>()

  /** `id` is about to run here (its record is being committed): a delivery after it waits for it as running. */
  expect(id: string): void {
    if (this.running.has(id)) return
    const { promise, resolve } = Promise.withResolvers<void>()
    this.running.set(id, promise)
    this.expected.set(id, () => {
      resolve()
      if (this.running.get(id) === promise) this.running.delete(id)
    })
  }

  /** `id` will not run here after all (its record was not committed). */
  forget(id: string): void {
    const end = this.expected.get(id)
    this.expected.delete(id)
    end?.()
  }

  /** Marks `id` as running here until `work` settles; returns `work`. */
  track<T>(id: string, work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => {},
      () => {},
    )
    const end = this.expected.get(id)
    if (end) {
      this.expected.delete(id)
      void settled.then(end)
    }
    this.running.set(id, settled)
    void settled.then(() => {
      if (this.running.get(id) === settled) this.running.delete(id)
    })
    return work
  }

  /**
   * Resolves true once no delivery in `after` is owed (`owed(id)` reads the store), false if
   * `stopped()` turns true first (shutting down: the delivery stays owed, for whoever takes it over).
   */
  async wait(after: readonly string[], owed: (id: string) => Promise<boolean>, stopped: () => boolean): Promise<boolean> {
    for (const id of after) {
      for (;;) {
        if (stopped()) return false
        const here = this.running.get(id)
        if (here) {
          await here
          continue
        }
        if (!(await owed(id))) break
        await new Promise((done) => setTimeout(done, POLL_MS))
      }
    }
    return !stopped()
  }
}

/** The key a delivery's turn is kept under: its endpoint and its event's subject. */
export const turnKey = (endpointId: string, subject: string): string => `${endpointId}|${subject}`
