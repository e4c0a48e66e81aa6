/**
 * docs/spec.md Conventions rule 1: bodies are JSON objects. One parser owns every body rule, so it runs
 * only for requests that carry a body (reads never pay for it):
 * - a body sent with another content type is refused (Elysia would parse forms and plain text, so
 *   a form post could create an agent);
 * - malformed JSON is refused;
 * - a JSON value that is not an object is refused (Elysia folds `[]`, `5` or `true` into `{}` when
 *   every field is optional, so a PATCH answered 200 having done nothing);
 * - a body larger than its surface allows (body-limits.ts) is refused with 413 while it arrives,
 *   vendors' callbacks included, before any signature or parsing work;
 * - a body nested deeper than MAX_BODY_DEPTH, with too many members in an object or in all, with a
 *   `__proto__` member at any depth, a NUL or a lone surrogate in any text is refused naming the
 *   member (body-shape.ts), before any route schema runs, in passes linear in the body's size;
 * - credentials are checked before the body is read (401/403 without reading a byte of it), where
 *   the surface needs them; the refused body is then drained up to its limit (body-drain.ts) so
 *   the client, still sending, reads the answer instead of a reset;
 * - a body that arrives too slowly is refused with 408 and the connection closed (body-deadline.ts):
 *   Bun cuts slow headers, but a body trickling in a byte a second held its connection forever.
 * Elysia wraps what a parser throws in a ParseError; the error plugin finds the BodyError inside,
 * checks the caller's credentials first (401/403 come before any complaint about the body), then
 * answers 400 `body: …` on v1 and the console, 422 `loc: ["body"]` on legacy.
 */
import { Elysia } from 'elysia'
import { BodySchemaError, type BodySchemas, holdBodyRefusal } from './body-check'
import { BodyDeadlines, type BodyProgress, BodyTimeout } from './body-deadline'
import { drainUnread, hasBody, unreadBody } from './body-drain'
import { bodyLimitOf, isVendorCallback, sizeInWords } from './body-limits'
import { shapeFault, structureFault } from './body-shape'
import { type CredentialCheck, surfaceOf } from './surface'

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

/**
 * Seconds a connection's idle timeout outlasts its body's deadline, so the 408 is written before
 * Bun closes the connection (its idle timer fires up to 4 s late: a 30 s timeout cut at 28–32 s).
 */
const IDLE_MARGIN_S = 5

export interface JsonBodyOptions {
  deadlines?: BodyDeadlines
  /** The surface's credential check, run before a body is read (none on public paths). */
  checkCredentials?: CredentialCheck
  /** The routes' body schemas, checked before Elysia's own check (body-check.ts). */
  schemas?: BodySchemas
  /** The server's idle timeout (HTTP_IDLE_SECONDS), restored once a body has arrived. */
  idleSeconds?: number
  /**
   * The listening server (client addresses, per-request idle timeouts). Not read from the hook's
   * context: a hook that reads `server` makes Elysia define it on every request of every route.
   */
  server?: () => Bun.Server<unknown> | null | undefined
}

export function jsonBodies({ deadlines = new BodyDeadlines(), checkCredentials, schemas, idleSeconds, server: serverOf = () => null }: JsonBodyOptions = {}) {
  // Requests whose credentials were checked: a request context runs for them.
  const guarded = new WeakSet<Request>()
  return new Elysia({ name: 'json-bodies' })
    .onParse({ as: 'global' }, async ({ request, contentType, set }) => {
      // No body: Elysia's own handling (none) stands.
      if (!hasBody(request)) return
      const server = serverOf()
      const path = new URL(request.url).pathname
      // Vendors' webhooks (a phone network's callbacks, a chat platform's messages) arrive in the
      // vendor's own format (Twilio posts forms): their routes read the raw text and check the
      // vendor's signature over exactly those bytes. They carry no credentials of ours.
      const vendor = isVendorCallback(path)
      const limit = bodyLimitOf(path)
      const declared = Number(request.headers.get('content-length') ?? NaN)
      const client = server?.requestIP(request)?.address ?? 'unknown'
      // A caller who may not send this request gets its 401/403 before its body costs anything;
      // the body is drained (up to its limit) first, so a client still sending reads the answer.
      if (!vendor) {
        try {
          if (await checkCredentials?.(request, surfaceOf(path))) guarded.add(request)
        } catch (refusal) {
          // A trickle cut short is closed here; one too large to drain, by the answer (lingering).
          if ((await drainUnread(request, limit)) === 'cut') (set.headers as Record<string, string>).connection = 'close'
          throw refusal
        }
      }
      const length = Number.isFinite(declared) ? declared : null
      // Bun's idle timer does not restart while a body arrives: a body still within its deadline
      // (1 MB gets 35.5 s) was cut at the idle timeout (30 s) with no answer. It gets its deadline
      // and a margin instead, and the server's own timeout back once it has arrived.
      const idle = (seconds: number) => server?.timeout(request, seconds)
      const read = (how: (progress: BodyProgress) => Promise<string>) => {
        if (idleSeconds !== undefined) idle(Math.max(idleSeconds, Math.ceil(deadlines.allowedMs(length ?? limit) / 1000) + IDLE_MARGIN_S))
        return deadlines
          .read(client, length, how)
          .then((text) => {
            if (idleSeconds !== undefined) idle(idleSeconds)
            return text
          })
          .catch((err: unknown) => {
            const tooSlow = err instanceof BodyTimeout
            // Whatever is answered (408 or 413, or 401 first), the rest of this body is never read: close.
            if (tooSlow || (err instanceof BodyError && err.status === 413)) (set.headers as Record<string, string>).connection = 'close'
            if (!tooSlow) throw err
            throw new BodyError(err.message, 'value_error', [], 408)
          })
      }
      // Too large by its own account: refused at once, without reading a byte (the answer closes).
      if (declared > limit) throw tooLarge(limit)
      // A declared length bounds the body already (HTTP framing), so it is read whole, natively; only a
      // chunked body is read piece by piece against the limit (the stream reader costs ~3% of a POST).
      const whole = (progress: BodyProgress) => (Number.isFinite(declared) ? request.text() : readBounded(request, progress, limit))
      if (vendor) return read(whole)
      const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
      if (type !== 'application/json' && !type.endsWith('+json')) {
        throw new BodyError(`must be JSON, sent with Content-Type: application/json (got ${type || 'no content type'})`, 'value_error')
      }
      const text = await read(whole)
      const structure = structureFault(text)
      if (structure) throw new BodyError(structure.message, 'value_error', structure.path)
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        throw new BodyError('not valid JSON', 'json_invalid')
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BodyError('must be an object', 'value_error')
      const fault = shapeFault(value)
      if (fault) throw new BodyError(fault.message, fault.kind, fault.path)
      return value
    })
    .onTransform({ as: 'global' }, ({ request, body, route }) => {
      // No body was parsed (every GET): nothing to check, and no header read on the way.
      if (!schemas || body === undefined || !hasBody(request)) return
      const all = schemas.failures(request.method, route, body)
      if (!all) return
      const refusal = new BodySchemaError(all)
      // A request context comes first where credentials are checked, and throws it (body-check.ts).
      if (!guarded.has(request)) throw refusal
      holdBodyRefusal(request, refusal)
    })
    .mapResponse({ as: 'global' }, ({ request, set }) => {
      if (unreadBody(request)) (set.headers as Record<string, string>).connection = 'close'
    })
}

const tooLarge = (limit: number) => new BodyError(`is larger than ${sizeInWords(limit)}, the most a request body may be`, 'value_error', [], 413)

/** The body as text, refusing it as soon as more than `limit` bytes have arrived; reports each chunk. */
async function readBounded(request: Request, progress: BodyProgress, limit: number): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  progress.onCancel(() => void reader.cancel().catch(() => {}))
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      // The rest is drained for a moment while the 413 is sent (body-drain.ts, lingering).
      reader.releaseLock()
      throw tooLarge(limit)
    }
    progress.received(size)
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
