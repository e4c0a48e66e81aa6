/**
 * docs/spec.md Conventions rule 1: bodies are JSON objects. One parser owns every body rule, so it runs
 * only for requests that carry a body (reads never pay for it):
 * - a body sent with another content type is refused (Elysia would parse forms and plain text, so
 *   a form post could create an agent);
 * - malformed JSON is refused;
 * - a JSON value that is not an object is refused (Elysia folds `[]`, `5` or `true` into `{}` when
 *   every field is optional, so a PATCH answered 200 having done nothing);
 * - a `__proto__` member, at any depth, is refused as the unknown field it is. JSON.parse keeps it
 *   as an own property, but schema transforms, spreads and merges drop it silently, so some routes
 *   refused it and others accepted the body without it; here it is refused before any of them.
 * - a body that arrives too slowly is refused with 408 and the connection closed (body-deadline.ts):
 *   Bun cuts slow headers, but a body trickling in a byte a second held its connection forever.
 * Elysia wraps what a parser throws in a ParseError; the error plugin finds the BodyError inside,
 * checks the caller's credentials first (401/403 come before any complaint about the body), then
 * answers 400 `body: …` on v1 and the console, 422 `loc: ["body"]` on legacy.
 */
import { Elysia } from 'elysia'
import { BodyDeadlines, type BodyProgress, BodyTimeout } from './body-deadline'

/**
 * The largest body we read. The largest legitimate one is pasted knowledge: 200,000 characters
 * (docs/spec.md Limits), at most ~1.6 MB as escaped UTF-8 JSON; 2 MiB covers it. Bigger bodies are
 * refused here with 413 in the surface's error shape (Bun's own limit would answer a bare 413):
 * at once when Content-Length says so, after 2 MiB when a chunked body runs past it.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024

export class BodyError extends Error {
  constructor(
    message: string,
    /** The legacy 422 `type`. */
    readonly kind: 'json_invalid' | 'value_error' | 'extra_forbidden',
    /** Where in the body, when the complaint is about one member (empty: the body as a whole). */
    readonly path: (string | number)[] = [],
    /** The answer's status when not the surface's usual 400 / 422 (413 for a body too large). */
    readonly status: number | null = null,
  ) {
    super(message)
    this.name = 'BodyError'
  }
}

/** The BodyError behind a ParseError, or the generic one for anything else that failed to parse. */
export function bodyErrorOf(error: unknown): BodyError {
  const cause = (error as { cause?: unknown })?.cause
  return cause instanceof BodyError ? cause : new BodyError('not valid JSON', 'json_invalid')
}

const hasBody = (request: Request): boolean => {
  const length = request.headers.get('content-length')
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding')
}

/**
 * A body nobody read (no route, a refusal before parsing, a route that reads none): Bun would go on
 * reading it after the answer to keep the connection, with no deadline, so the answer closes it.
 */
export const unreadBody = (request: Request): boolean => hasBody(request) && !request.bodyUsed

/**
 * Vendors' webhooks (a phone network's status callbacks, a chat platform's messages) arrive in the
 * vendor's own format (Twilio posts forms) and are read by their routes as raw text, which verify
 * the vendor's signature over exactly those bytes.
 */
export const VENDOR_CALLBACKS_PREFIX = '/telephony/'
export const VENDOR_CALLBACK_PREFIXES = [VENDOR_CALLBACKS_PREFIX, '/messaging/'] as const

export function jsonBodies(deadlines = new BodyDeadlines()) {
  return new Elysia({ name: 'json-bodies' })
    .onParse({ as: 'global' }, async ({ request, contentType, server, set }) => {
      // No body: Elysia's own handling (none) stands.
      if (!hasBody(request)) return
      const declared = Number(request.headers.get('content-length') ?? NaN)
      const client = server?.requestIP(request)?.address ?? 'unknown'
      const read = (how: (progress: BodyProgress) => Promise<string>) =>
        deadlines.read(client, Number.isFinite(declared) ? declared : null, how).catch((err: unknown) => {
          if (!(err instanceof BodyTimeout))
            throw err
            // Whatever is answered (408, or 401 first), the rest of this body is never read: close.
          ;(set.headers as Record<string, string>).connection = 'close'
          throw new BodyError(err.message, 'value_error', [], 408)
        })
      const path = new URL(request.url).pathname
      if (VENDOR_CALLBACK_PREFIXES.some((p) => path.startsWith(p))) return read(() => request.text())
      const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
      if (type !== 'application/json' && !type.endsWith('+json')) {
        throw new BodyError(`must be JSON, sent with Content-Type: application/json (got ${type || 'no content type'})`, 'value_error')
      }
      if (declared > MAX_BODY_BYTES) throw tooLarge()
      // A declared length bounds the body already (HTTP framing), so it is read whole, natively; only a
      // chunked body is read piece by piece against the limit (the stream reader costs ~3% of a POST).
      const text = await read((progress) => (Number.isFinite(declared) ? request.text() : readBounded(request, progress)))
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        throw new BodyError('not valid JSON', 'json_invalid')
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BodyError('must be an object', 'value_error')
      const proto = protoPath(value, [])
      if (proto) throw new BodyError('is not a field (unknown fields are refused)', 'extra_forbidden', proto)
      return value
    })
    .mapResponse({ as: 'global' }, ({ request, set }) => {
      if (unreadBody(request)) (set.headers as Record<string, string>).connection = 'close'
    })
}

/**
 * The path of the first `__proto__` member in a parsed body, or null. Iterative, so a deeply
 * nested body (2 MiB of brackets) cannot exhaust the stack.
 */
function protoPath(root: object, start: (string | number)[]): (string | number)[] | null {
  const stack: [unknown, (string | number)[]][] = [[root, start]]
  while (stack.length) {
    const [node, path] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], [...path, i]])
      continue
    }
    if (Object.hasOwn(node, '__proto__')) return [...path, '__proto__']
    for (const key of Object.keys(node).reverse()) stack.push([(node as Record<string, unknown>)[key], [...path, key]])
  }
  return null
}

const tooLarge = () => new BodyError(`is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB, the most a request body may be`, 'value_error', [], 413)

/** The body as text, refusing it as soon as more than MAX_BODY_BYTES have arrived; reports each chunk. */
async function readBounded(request: Request, progress: BodyProgress): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  progress.onCancel(() => void reader.cancel().catch(() => {}))
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    progress.received(size)
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
