/**
 * Draining a body nobody will use. A request refused before its body was read (no key, no route,
 * too many failed keys, draining) was answered and its connection closed at once; a client still
 * sending a large body then got a TCP reset instead of the answer (Node's fetch saw EPIPE for 5 in
 * 10 keyless 1.8 MB posts), since closing a socket with unread input resets it. Bun cannot close
 * a connection later than right after the answer (a `Connection: close` answer closes at once,
 * and an answer without it has Bun read the rest of the body, however long, to keep the
 * connection), so the body is read and dropped first, up to the surface's limit, while it arrives
 * briskly, and only then answered: the client's send completes and it reads the answer. A body
 * trickling in is not waited for (it would hold the answer): it is answered once its short drain
 * time is up, and closed.
 */

/**
 * A drain's time: a round trip on a poor link, plus the body at DRAIN_MIN_BYTES_PER_S. A body
 * still sending after that is cut (a byte every 200 ms declaring 100 KB is answered at ~0.35 s).
 */
export const DRAIN_GRACE_MS = 250
/**
 * 1 MiB/s (8 Mbit/s, a modest broadband uplink): 1.8 MB drains within 2 s; a keyless 1.8 MB
 * post on loopback drains in a few ms.
 */
export const DRAIN_MIN_BYTES_PER_S = 1024 * 1024

export const hasBody = (request: Request): boolean => {
  const length = request.headers.get('content-length')
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding')
}

/**
 * A body nobody read (no route, a refusal before parsing, a route that reads none): Bun would go on
 * reading it after the answer to keep the connection, with no deadline, so the answer closes it.
 */
export const unreadBody = (request: Request): boolean => hasBody(request) && !request.bodyUsed

/**
 * Reads and drops an unread body of at most `limit` bytes within its drain time. True when the
 * whole body was read (or there was none), so the connection may stay; false when it must close:
 * the body declares more than `limit` (nothing is read: it is answered at once), runs past it, or
 * is still arriving when its time is up.
 */
export async function drainUnread(request: Request, limit: number): Promise<boolean> {
  if (!unreadBody(request)) return true
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limit || !request.body) return false
  const reader = request.body.getReader()
  const allowedMs = DRAIN_GRACE_MS + ((Number.isFinite(declared) ? declared : limit) / DRAIN_MIN_BYTES_PER_S) * 1000
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), allowedMs)
  })
  const drained = (async () => {
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return true
      size += value.byteLength
      if (size > limit) return false
    }
  })().catch(() => false)
  const whole = await Promise.race([drained, timeUp])
  clearTimeout(timer)
  if (!whole) void reader.cancel().catch(() => {})
  return whole
}
