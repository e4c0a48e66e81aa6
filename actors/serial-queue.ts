/**
 * Per-key serial execution: jobs for one key run strictly one after another in the order they
 * were queued; jobs for different keys run concurrently. A failing job does not stop the ones
 * behind it. A key with nothing queued holds no memory (its entry is deleted when it drains), so
 * passivated actors cost nothing here.
 */

interface Lane {
  tail: Promise<void>
  /** Jobs queued or running on this key. */
  depth: number
}

export class SerialQueue {
  private readonly lanes = new Map<string, Lane>()

  /** Queues `job` behind every job already queued for `key`; resolves with its result. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key)
    if (!lane) {
      lane = { tail: Promise.resolve(), depth: 0 }
      this.lanes.set(key, lane)
    }
    const current = lane
    current.depth++
    const result = current.tail.then(job)
    current.tail = result.then(
      () => this.finish(key, current),
      () => this.finish(key, current),
    )
    return result
  }

  /** Jobs queued or running for `key` (0 when idle). */
  depth(key: string): number {
    return this.lanes.get(key)?.depth ?? 0
  }

  /** Keys with queued or running jobs. */
  get activeKeys(): number {
    return this.lanes.size
  }

  /** Resolves once every job queued so far (on every key) has finished. */
  async drain(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((l) => l.tail))
  }

  private finish(key: string, lane: Lane): void {
    lane.depth--
    if (lane.depth === 0 && this.lanes.get(key) === lane) this.lanes.delete(key)
  }
}
