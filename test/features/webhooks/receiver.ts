/**
 * A real local webhook receiver: Bun.serve on 127.0.0.1 and a free port. It keeps every request's
 * raw body bytes and headers (so tests verify signatures on exactly what arrived), and answers as
 * told: a status, after an optional delay, or only once the test lets held requests go.
 */
import { until } from '../../support/until'

export interface Received {
  path: string
  headers: Headers
  /** The body exactly as received. */
  raw: Uint8Array
  text: string
  json: any
  at: number
}

export interface Receiver {
  url: string
  received: Received[]
  /** Status to answer (default 200), how long to wait first (default 0), and extra headers (e.g. a redirect's location). */
  respond(status: number, delayMs?: number, headers?: Record<string, string>): void
  /** Holds every request from now on unanswered until the returned function is called. */
  hold(): () => void
  /** Requests answered so far (a held one counts once it is let go). */
  readonly answered: number
  /** Resolves once `n` requests arrived (throws after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>
  stop(): Promise<void>
}

// Deliveries to a loopback receiver arrive in milliseconds; 5 s is far above that and well
// under bunfig's 20 s test timeout.
export const WAIT_MS = 5_000

export function startReceiver(): Receiver {
  const received: Received[] = []
  let status = 200
  let delayMs = 0
  let headers: Record<string, string> = {}
  let held: Promise<void> | null = null
  let answered = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const raw = new Uint8Array(await req.arrayBuffer())
      const text = new TextDecoder().decode(raw)
      let json: unknown = null
      try {
        json = JSON.parse(text)
      } catch {
        /* kept as text */
      }
      received.push({ path: new URL(req.url).pathname, headers: req.headers, raw, text, json, at: Date.now() })
      if (delayMs > 0) await Bun.sleep(delayMs)
      if (held) await held
      answered++
      return new Response(status >= 400 ? `nope ${status}` : 'ok', { status, headers })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    respond(s, d = 0, h = {}) {
      status = s
      delayMs = d
      headers = h
    },
    hold() {
      let release!: () => void
      held = new Promise<void>((r) => (release = r))
      return () => {
        held = null
        release()
      }
    },
    get answered() {
      return answered
    },
    async waitFor(n, timeoutMs = WAIT_MS) {
      await until(
        `${n} requests at the receiver`,
        () => received.length,
        (got) => got >= n,
        { withinMs: timeoutMs, everyMs: 5 },
      )
      return received
    },
    stop: async () => void server.stop(true),
  }
}
