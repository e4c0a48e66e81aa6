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
 * How much of a body too large to take is read and dropped after its answer, at most: well past
 * what a client can have in flight when it reads the answer and stops. Linux's largest default
 * socket buffers hold 10 MiB (6 MiB to receive, 4 MiB to send: tcp_rmem, tcp_wmem), and on a
 * loaded host the answer takes a while to be sent: bench:bodies saw a client on loopback send
 * 19 MiB before its 413 arrived. Dropped as read: it costs CPU, not memory.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024
/**
 * How long, at most: a client reads the answer within a round trip and stops sending; what it had
 * in flight arrives within that too. A client that sends on regardless is cut after it (a reset,
 * long after it was answered).
 */
export const LINGER_MS = 500

/** What a drain did: read the whole body, found it too large to try (declared past the limit, or
 * past it while read), or cut it (still arriving when its time was up). */
export type Drained = 'whole' | 'too-large' | 'cut'

/** How long a drain of `bytes` may take. */
const drainMs = (bytes: number) => DRAIN_GRACE_MS + (bytes / DRAIN_MIN_BYTES_PER_S) * 1000

/** Reads and drops up to `limit` more bytes of `request`'s body within `allowedMs`. */
async function discard(request: Request, limit: number, allowedMs: number): Promise<Drained> {
  if (!request.body) return 'whole'
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = request.body.getReader()
  } catch {
    return 'cut'
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeUp = new Promise<Drained>((resolve) => {
    timer = setTimeout(() => resolve('cut'), allowedMs)
  })
  const drained = (async (): Promise<Drained> => {
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return 'whole'
      size += value.byteLength
      if (size > limit) return 'too-large'
    }
  })().catch((): Drained => 'cut')
  const outcome = await Promise.race([drained, timeUp])
  clearTimeout(timer)
  if (outcome !== 'whole') void reader.cancel().catch(() => {})
  return outcome
}

/**
 * Reads and drops an unread body of at most `limit` bytes within its drain time. 'whole' (or no
 * body): the connection may stay; otherwise the answer closes it: 'too-large' when the body
 * declares more than `limit` (nothing is read: it is answered at once, see lingering) or runs past
 * it, 'cut' when it is still arriving when its time is up.
 */
export async function drainUnread(request: Request, limit: number): Promise<Drained> {
  if (!unreadBody(request)) return 'whole'
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limit) return 'too-large'
  return discard(request, limit, drainMs(Number.isFinite(declared) ? declared : limit))
}

/**
 * `answer`, sent at once, with the connection closed only after up to LINGER_MAX_BYTES more of the
 * body (or LINGER_MS) have been read and dropped: the answer to a body too large to take.
 * Closing with the client's bytes unread resets the connection, and a client still sending saw
 * the reset (EPIPE) instead of the 413 or 401 sent before it; in the meantime it reads the answer
 * and stops. Bun closes a `Connection: close` answer once its body ends, and reads no request body
 * after that, so the answer's body stays open while the request's is drained.
 */
export async function lingering(answer: Response, request: Request): Promise<Response> {
  const payload = new Uint8Array(await answer.arrayBuffer())
  const headers = new Headers(answer.headers)
  headers.set('connection', 'close')
  headers.delete('content-length')
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(payload)
    },
    async pull(controller) {
      await discard(request, LINGER_MAX_BYTES, LINGER_MS)
      controller.close()
    },
  })
  return new Response(body, { status: answer.status, headers })
}
