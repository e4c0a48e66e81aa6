/**
 * When coordination cannot answer: Redis is down (node-redis queues commands while it reconnects,
 * without limit) or stalled (a paused server keeps its socket open and never replies, so a command
 * written to it waits forever). Every Redis operation is bounded: it answers within
 * COMMAND_TIMEOUT_MS or fails with CoordinationUnavailable, which the HTTP kernel answers 503 with
 * Retry-After, and readiness reports.
 */
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ErrorReply,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from 'redis'

/**
 * A healthy Redis answers our commands (Lua scripts included) in well under 10 ms on an idle
 * machine; but on this 2-core host at a load average of 14 (bench:cluster beside other test runs)
 * 184 operations of one run took longer than 2 s, and failing those turned slowness into errors.
 * 5 s is half the ~10 s a request used to hang on a paused Redis and leaves that starved run no
 * failed operation; a connection that is gone is reported sooner (LOST_CONNECTION_MS).
 */
export const COMMAND_TIMEOUT_MS = 5_000

/**
 * A lost connection is an outage once it has lasted the reconnect backoff's cap (redis.ts
 * RECONNECT_MAX_MS, 2 s): a Redis back from a blip is reconnected within it; after that,
 * operations fail at once instead of each waiting out COMMAND_TIMEOUT_MS in the offline queue.
 */
export const LOST_CONNECTION_MS = 2_000

/** Server replies that mean "not now" rather than a bug in the command: loading, out of memory, read-only replica, … */
const TRANSIENT_REPLIES = /^(LOADING|BUSY|MISCONF|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|OOM|NOREPLICAS)\b/

export class CoordinationUnavailable extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause })
    this.name = 'CoordinationUnavailable'
  }
}

const CONNECTION_ERRORS = [
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
]

/** Socket errors a connection attempt or a write may surface as they are. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/** A node-redis failure that means the server is unreachable or not serving, as opposed to a command's own error (a bad argument, a script bug). */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof ErrorReply) return TRANSIENT_REPLIES.test(error.message)
  if (CONNECTION_ERRORS.some((kind) => error instanceof kind)) return true
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && SOCKET_CODES.has(code)
}

/**
 * Runs one coordination operation against Redis within `ms`: a timeout, or a connection failure,
 * becomes CoordinationUnavailable naming the operation; a command error (a bad argument, a script
 * bug) passes through unchanged. A command that times out stays queued in the client and settles
 * (unobserved) when Redis answers or the connection drops.
 */
export function bounded<T>(operation: string, run: () => Promise<T>, ms = COMMAND_TIMEOUT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CoordinationUnavailable(`Redis did not answer ${operation} within ${ms / 1000} s`)), ms)
    let pending: Promise<T>
    try {
      pending = run()
    } catch (error) {
      pending = Promise.reject(error)
    }
    pending.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(isUnavailable(error) ? new CoordinationUnavailable(`Redis failed ${operation}: ${error instanceof Error ? error.message : String(error)}`, error) : error)
      },
    )
  })
}
