/**
 * Read deadlines for request bodies. Bun cuts a client that is slow to send its headers (~10 s
 * idle) but not one that sends its body a byte at a time: each byte resets the idle timer, so 100
 * such connections stayed open indefinitely. A body must arrive within a grace period plus its
 * length at a minimum rate; one that does not is refused (json-body.ts answers 408 and closes the
 * connection). Bodies still arriving after a second are counted per client address, and a client
 * with too many of them at once has the next one cut at that point.
 */

/**
 * Every body gets 5 s before the rate counts: a JSON body of a few KB takes one round trip even on
 * a poor mobile link, and 5 s is half Bun's own header idle timeout.
 */
export const BODY_GRACE_MS = 5_000
/**
 * 32 KiB/s (256 kbit/s, a weak 3G link) on top of the grace: the largest body (2 MiB) gets 69 s,
 * 100 KB gets 8 s. A client sending a byte a second is cut at the grace.
 */
export const BODY_MIN_BYTES_PER_S = 32 * 1024
/** A body still arriving after this long counts as slow for its client. */
export const SLOW_BODY_MS = 1_000
/**
 * Slow bodies one client address may have at once; the next is cut when it turns slow. Legitimate
 * clients have one or two; behind a proxy every client shares its address, so such a proxy
 * should buffer request bodies (nginx does by default).
 */
export const MAX_SLOW_BODIES_PER_CLIENT = 32

/** The deadline was missed (json-body.ts turns it into a 408). */
export class BodyTimeout extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'BodyTimeout'
  }
}

/** What a reader tells the deadline: bytes received so far, and how to stop it when time is up. */
export interface BodyProgress {
  received(bytes: number): void
  onCancel(cancel: () => void): void
}

export interface BodyDeadlineOptions {
  graceMs?: number
  minBytesPerS?: number
  slowMs?: number
  maxSlowPerClient?: number
  /** Told of each body cut: its client and how many of that client's bodies are slow now. */
  onTimeout?: (client: string, slowNow: number, message: string) => void
}

export class BodyDeadlines {
  private readonly slow = new Map<string, number>()
  private readonly graceMs: number
  private readonly rate: number
  private readonly slowMs: number
  private readonly maxSlow: number

  constructor(private readonly opts: BodyDeadlineOptions = {}) {
    this.graceMs = opts.graceMs ?? BODY_GRACE_MS
    this.rate = opts.minBytesPerS ?? BODY_MIN_BYTES_PER_S
    this.slowMs = opts.slowMs ?? SLOW_BODY_MS
    this.maxSlow = opts.maxSlowPerClient ?? MAX_SLOW_BODIES_PER_CLIENT
  }

  /** How long a body of `bytes` may take to arrive. */
  allowedMs(bytes: number): number {
    return this.graceMs + (bytes / this.rate) * 1000
  }

  /** Slow bodies of `client` being read now. */
  slowBodies(client: string): number {
    return this.slow.get(client) ?? 0
  }

  /**
   * Runs `read` against the deadline: the grace plus `declared` bytes (or, for a body of unknown
   * length, the bytes received so far) at the minimum rate. Rejects with BodyTimeout when missed.
   */
  read<T>(client: string, declared: number | null, read: (progress: BodyProgress) => Promise<T>): Promise<T> {
    const started = Date.now()
    let received = 0
    let cancel = () => {}
    let deadline: ReturnType<typeof setTimeout> | undefined
    let slowTimer: ReturnType<typeof setTimeout> | undefined
    let counted = false
    let missed: (err: BodyTimeout) => void = () => {}
    const timeout = new Promise<never>((_, reject) => (missed = reject))
    const cut = (message: string) => {
      cancel()
      this.opts.onTimeout?.(client, this.slowBodies(client), message)
      missed(new BodyTimeout(message))
    }
    const arm = () => {
      clearTimeout(deadline)
      const allowedMs = this.allowedMs(declared ?? received)
      deadline = setTimeout(
        () =>
          cut(
            `did not arrive in time: ${received ? `${received} bytes` : 'nothing'} in ${((Date.now() - started) / 1000).toFixed(1)} s (a body gets ${this.graceMs / 1000} s, more at ${this.rate / 1024} KiB/s)`,
          ),
        started + allowedMs - Date.now(),
      )
    }
    arm()
    slowTimer = setTimeout(() => {
      counted = true
      const now = (this.slow.get(client) ?? 0) + 1
      this.slow.set(client, now)
      if (now > this.maxSlow) cut(`did not arrive in time: this client has ${now - 1} other slow request bodies open`)
    }, this.slowMs)
    const progress: BodyProgress = {
      received: (bytes) => {
        received = bytes
        if (declared === null) arm()
      },
      onCancel: (fn) => {
        cancel = fn
      },
    }
    const reading = read(progress)
    // Once cut, the reading may still settle (or fail as the connection closes): nobody waits for it.
    reading.catch(() => {})
    return Promise.race([reading, timeout]).finally(() => {
      clearTimeout(deadline)
      clearTimeout(slowTimer)
      if (!counted) return
      const left = (this.slow.get(client) ?? 1) - 1
      if (left > 0) this.slow.set(client, left)
      else this.slow.delete(client)
    })
  }
}
