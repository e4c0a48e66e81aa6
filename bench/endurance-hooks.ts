/**
 * bench:endurance's webhook receivers: local HTTP servers on 127.0.0.1 that count every delivery by
 * event id (`x-service-event-id`), so the end of the run can tell, per endpoint, which recorded
 * events never arrived and which arrived more than once. One of them answers only after a delay.
 */

export interface Delivery {
  type: string
  count: number
  /** Legacy deliveries' `x-service-delivery-attempt` values (a retry is attempt 2 or more). */
  attempts: number[]
}

export interface Receiver {
  name: string
  url: string
  got: Map<string, Delivery>
  /** Requests received, and the time of the latest (performance.now). */
  requests: number
  lastAt: number
  stop(): void
}

/** `onEvent` sees each delivery's parsed body after it is counted (the bench's developer reacting to events). */
export function startReceiver(name: string, delayMs: number, onEvent?: (type: string, body: any, id: string) => void): Receiver {
  const got = new Map<string, Delivery>()
  const receiver: Receiver = { name, url: '', got, requests: 0, lastAt: 0, stop: () => {} }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // The slow endpoint holds sockets for its delay; Bun's default idle timeout (10 s) covers it.
    async fetch(req) {
      const id = req.headers.get('x-service-event-id') ?? ''
      const type = req.headers.get('x-service-event') ?? ''
      const attempt = Number(req.headers.get('x-service-delivery-attempt') ?? 1)
      const text = await req.text()
      receiver.requests++
      receiver.lastAt = performance.now()
      const seen = got.get(id) ?? { type, count: 0, attempts: [] }
      seen.count++
      seen.attempts.push(attempt)
      got.set(id, seen)
      if (onEvent) onEvent(type, JSON.parse(text), id)
      if (delayMs > 0) await Bun.sleep(delayMs)
      return new Response(null, { status: 204 })
    },
  })
  receiver.url = `http://127.0.0.1:${server.port}/hook`
  receiver.stop = () => void server.stop(true)
  return receiver
}

export interface RecordedEvent {
  id: string
  type: string
  agentId: string | null
  /** False: recorded, not yet dispatched when the service stopped (its next start dispatches it). */
  dispatched?: boolean
}

export interface Account {
  name: string
  expected: number
  received: number
  /** Not received though the service had dispatched it. */
  lost: string[]
  /** Not received, and still undispatched in the store when the service stopped. */
  pending: number
  /** Event ids delivered more than once, and how many of those repeats were numbered retries (legacy attempt ≥ 2). */
  duplicated: number
  retried: number
  /** Deliveries of ids the service never recorded (must be 0). */
  unknown: number
}

/** What one receiver should have got (`subscribed`) against what it did. */
export function account(receiver: Receiver, events: RecordedEvent[], subscribed: (e: RecordedEvent) => boolean): Account {
  const expected = events.filter(subscribed)
  const ids = new Set(expected.map((e) => e.id))
  const missing = expected.filter((e) => !receiver.got.has(e.id))
  const lost = missing.filter((e) => e.dispatched !== false).map((e) => `${e.type} ${e.id}`)
  const pending = missing.length - lost.length
  let duplicated = 0
  let retried = 0
  let unknown = 0
  for (const [id, d] of receiver.got) {
    if (!ids.has(id)) unknown++
    if (d.count > 1) {
      duplicated++
      if (d.attempts.some((a) => a >= 2)) retried++
    }
  }
  return { name: receiver.name, expected: expected.length, received: receiver.got.size, lost, pending, duplicated, retried, unknown }
}
