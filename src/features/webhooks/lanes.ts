/**
 * Per-endpoint delivery lanes: each endpoint has its own small pool of in-flight deliveries and
 * its own FIFO queue, so a slow or dead endpoint only ever waits on itself ("a slow or dead
 * endpoint never delays another's deliveries"). A full queue refuses at once (LaneFullError)
 * instead of growing memory without bound; the caller counts that as a failed attempt.
 *
 * A queued job costs one small entry (the job, and its caller's resolve/reject); the queue is an
 * array read from a moving head, so taking the next job is O(1) even with thousands waiting.
 */

export class LaneFullError extends Error {
  override readonly name = 'LaneFullError'
}

export class LanesStoppedError extends Error {
  override readonly name = 'LanesStoppedError'
}

export interface LaneLimits {
  /** Deliveries in flight at once per endpoint. */
  concurrency: number
  /** Deliveries waiting per endpoint beyond those in flight. */
  maxQueued: number
}

interface Entry {
  job: () => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

interface Lane {
  active: number
  queue: Entry[]
  /** Index of the next entry to run in `queue`. */
  head: number
}

// The consumed front of a queue is cut off once it is this long (and at least half the array),
// so a long-lived busy lane does not keep every finished entry alive.
const COMPACT_AT = 1_024

export class Lanes {
  private readonly lanes = new Map<string, Lane>()
  private readonly inFlight = new Set<Promise<unknown>>()
  private stopped = false

  constructor(private readonly limits: LaneLimits) {}

  /** Runs `job` in `key`'s lane once a slot is free; LaneFullError when the lane's queue is full. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.stopped) return reject(new LanesStoppedError('deliveries are stopping'))
      let lane = this.lanes.get(key)
      if (!lane) {
        lane = { active: 0, queue: [], head: 0 }
        this.lanes.set(key, lane)
      }
      const entry: Entry = { job, resolve: resolve as (value: unknown) => void, reject }
      if (lane.active < this.limits.concurrency) {
        lane.active++
        return this.start(key, lane, entry)
      }
      if (lane.queue.length - lane.head >= this.limits.maxQueued) {
        return reject(new LaneFullError(`${this.limits.maxQueued} deliveries are already waiting for this endpoint`))
      }
      lane.queue.push(entry)
    })
  }

  get isStopped(): boolean {
    return this.stopped
  }

  /** Deliveries waiting or running for `key` (0 when it has no lane). */
  load(key: string): number {
    const lane = this.lanes.get(key)
    return lane ? lane.active + lane.queue.length - lane.head : 0
  }

  /** Refuses new work, drops what is queued, and waits up to `graceMs` for what is running. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    for (const lane of this.lanes.values()) {
      const waiting = lane.queue.slice(lane.head)
      lane.queue = []
      lane.head = 0
      for (const entry of waiting) entry.reject(new LanesStoppedError('deliveries are stopping'))
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([Promise.all(this.inFlight), new Promise((done) => (timer = setTimeout(done, graceMs)))])
    clearTimeout(timer)
  }

  private start(key: string, lane: Lane, entry: Entry): void {
    const running = (async () => entry.job())().then(entry.resolve, entry.reject)
    this.inFlight.add(running)
    void running.then(() => {
      this.inFlight.delete(running)
      this.next(key, lane)
    })
  }

  /** A finished job hands its slot straight to the next waiter, or frees it. */
  private next(key: string, lane: Lane): void {
    const entry = lane.head < lane.queue.length ? lane.queue[lane.head++] : undefined
    if (lane.head >= COMPACT_AT && lane.head * 2 >= lane.queue.length) {
      lane.queue = lane.queue.slice(lane.head)
      lane.head = 0
    }
    if (entry) {
      this.start(key, lane, entry)
      return
    }
    lane.active--
    if (lane.active === 0 && this.lanes.get(key) === lane) this.lanes.delete(key)
  }
}
