/**
 * Shapes every failure: v1 and console answer `{ error }` (a 400 names the field), legacy answers
 * `{ detail, status }` and 422 `{ detail: [{ loc, msg, type }] }` for request validation
 * (docs/spec.md Errors rules 1–2). Unexpected errors are logged with the request id and answer 500
 * without internals.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../logger'
import type { AuthThrottle, ClientOf } from './auth-throttle'
import { BodySchemaError } from './body-check'
import { drainUnread, lingering, unreadBody } from './body-drain'
import { isVendorCallback } from './body-limits'
import type { ApiError } from './errors'
import { settleFailedClaim } from './idempotency'
import { bodyErrorOf } from './json-body'
import { outageRefusal } from './outage'
import { apiErrorOf } from './refusals'
import { type CredentialCheck, surfaceOf } from './surface'
import { describeSchemaError, fieldName, type JsonSchema, type SchemaError } from './validation-message'

const STATUS_TEXT: Record<number, string> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  410: 'gone',
  413: 'request body too large',
  422: 'unprocessable entity',
  429: 'rate limit exceeded',
  500: 'server error',
}

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'content-type': 'application/json' },
  })
}

/** What we read of Elysia's ValidationError (its `all` getter may throw). */
interface ValidationFailure {
  type?: string
  value?: unknown
  message: string
  all?: SchemaError[]
  valueError?: { path?: string; schema?: JsonSchema; value?: unknown }
}

function validationErrors(error: ValidationFailure): SchemaError[] {
  try {
    const all = error.all
    if (Array.isArray(all) && all.length) return all
  } catch {
    /* fall through to the single error */
  }
  return [{ path: error.valueError?.path ?? '', message: error.message, schema: error.valueError?.schema, value: error.valueError?.value }]
}

function queryMemberWithValue(params: URLSearchParams, value: unknown): string | null {
  const matches = [...params.entries()].filter(([, raw]) => raw.trim() !== '' && Number(raw) === value).map(([name]) => name)
  return matches.length === 1 ? matches[0] : null
}

/**
 * The path parameter a coerced-number failure came from, or null when it came from the query.
 * Elysia decodes path parameters before the query: when they failed, none is decoded yet (all
 * still strings) and one of them holds the value; once they passed, numeric ones are numbers.
 * A route with only string parameters, one of which reads as the failing query number, would be
 * misread as a path failure; ids here carry prefixes (`wh_…`, `dlv_…`), so none reads as a number.
 */
function pathParamWithValue(params: Record<string, unknown> | undefined, value: unknown): string | null {
  const entries = Object.entries(params ?? {})
  if (entries.some(([, raw]) => typeof raw !== 'string')) return null
  const matches = entries.filter(([, raw]) => (raw as string).trim() !== '' && Number(raw) === value).map(([name]) => name)
  return matches[0] ?? null
}

/** FastAPI's names for where a value was: `path`, not Elysia's `params`; body and query as they are. */
const legacyLocation = (where: string) => (where === 'params' ? 'path' : where)

/** The first of each group of items with the same key, in order. */
function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>()
  return items.filter((item) => {
    const k = key(item)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/** Required-property errors come first so "is required" wins over a type complaint on the same field. */
function firstError(errors: SchemaError[]): SchemaError {
  return errors.find((e) => /required property/i.test(e.message)) ?? errors[0]
}

interface Failure {
  code: string | number
  error: unknown
  request: Request
  set: { headers: Record<string, unknown> | object; status?: number | string }
  params?: unknown
}

/**
 * `clientOf` gives a refused credential's address to the brake. The hook names the context members
 * it reads: Elysia builds each route's handler from what its hooks read, and a hook that takes the
 * whole context makes every request parse its cookies, copy its headers and parse its query.
 */
export function errorPlugin(
  logger: Logger,
  checkCredentials?: CredentialCheck,
  throttle?: { brake: AuthThrottle; clientOf: ClientOf },
  /** The most bytes a request's body may have (body-limits.ts); without it, unread bodies are not drained. */
  bodyLimit?: (request: Request) => number,
) {
  return new Elysia({ name: 'errors' }).onError({ as: 'global' }, async ({ code, error, request, set, params }) => {
    const failure: Failure = { code, error, request, set, params }
    let answer = await shape(failure, logger, checkCredentials)
    // A refused credential counts against its address; past the limit, the answer is the 429.
    if (answer.status === 401 && throttle) {
      const tooMany = await throttle.brake.failed(request, throttle.clientOf(request))
      if (tooMany) answer = await shape({ ...failure, code: 'UNKNOWN', error: tooMany }, logger, checkCredentials)
    }
    // What the request log reads: Elysia leaves 422 there for a validation failure answered 400,
    // and 200 for a path no route matched.
    set.status = answer.status
    if (!bodyLimit) {
      if (unreadBody(request)) answer.headers.set('connection', 'close')
      return answer
    }
    // A body nobody read is drained first (up to its limit), so a client still sending reads this;
    // one too large for that gets the answer at once and a moment's drain before the close.
    const limit = bodyLimit(request)
    const drained = await drainUnread(request, limit)
    if (drained === 'too-large' || answer.status === 413) return lingering(answer, request)
    if (drained === 'cut') answer.headers.set('connection', 'close')
    return answer
  })
}

async function shape({ code, error, request, set, params }: Failure, logger: Logger, checkCredentials?: CredentialCheck): Promise<Response> {
  // An Idempotency-Key the failed handler held is stored as its refusal, or released (idempotency.ts).
  // With coordination down that fails too; a release is then sent again until Redis answers.
  await settleFailedClaim(request, error).catch((err: unknown) => logger.warn({ err }, 'could not settle an Idempotency-Key'))
  const path = new URL(request.url).pathname
  const surface = surfaceOf(path)
  const requestId = String((set.headers as Record<string, string>)['x-request-id'] ?? '')
  // Headers set before the failure (request id, X-RateLimit-*) belong on the error answer too.
  const base: Record<string, string> = {}
  for (const [name, value] of Object.entries(set.headers as Record<string, unknown>)) {
    if (typeof value === 'string' && name.toLowerCase() !== 'content-type') base[name] = value
  }
  // Vendors' callbacks answer `{ error }`, as their routes do.
  const legacy = surface === 'legacy' && !isVendorCallback(path)

  const refusal = (e: ApiError) => {
    const headers = { ...base, ...(e.headers ?? {}) }
    if (legacy) return json(e.status, { detail: e.message, status: e.status }, headers)
    return json(e.status, { error: e.message, ...(e.extra ?? {}) }, headers)
  }

  const refused = apiErrorOf(error)
  if (refused) return refusal(refused)

  const outage = outageRefusal(error)
  if (outage) {
    logger.warn({ requestId, path, status: outage.status, err: error }, 'refused: a shared part is out of service')
    return refusal(outage)
  }

  if (code === 'VALIDATION' || error instanceof BodySchemaError) {
    const v = error as ValidationFailure
    if (v.type === 'response') {
      // Our own answer broke its schema: a server bug, never the caller's fault.
      logger.error({ requestId, path, err: v.message }, 'response failed its schema')
      return json(500, legacy ? { detail: 'server error', status: 500 } : { error: `server error (request ${requestId})` }, base)
    }
    let where = v.type ?? 'body'
    const errors = validationErrors(v)
    if (where === 'property') {
      // Elysia checks coerced numbers (path parameters, then query) one at a time and drops
      // where the value was; find it by the value it failed on (query values are few, and a
      // clash only loses the name).
      const param = pathParamWithValue(params as Record<string, unknown> | undefined, v.value)
      const named = param ?? queryMemberWithValue(new URL(request.url).searchParams, v.value)
      where = param ? 'params' : 'query'
      errors[0] = { ...errors[0], path: named ? `/${named}` : '', value: v.value }
    }
    if (legacy) {
      const detail = errors.map((e) => {
        const msg = describeSchemaError(e)
        return {
          loc: [
            legacyLocation(where),
            ...e.path
              .split('/')
              .filter(Boolean)
              .map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
          ],
          msg,
          // TypeBox reports a missing field twice (required property, then the type of
          // `undefined`); both read "is required", so both are `missing` and collapse below.
          type: msg === 'is required' ? 'missing' : /unexpected property/i.test(e.message) ? 'extra_forbidden' : 'value_error',
        }
      })
      return json(422, { detail: uniqueBy(detail, (d) => JSON.stringify([d.loc, d.type])) }, base)
    }
    const first = firstError(errors)
    const field = fieldName(first.path, where === 'body' ? 'body' : where)
    return json(400, { error: `${field}: ${describeSchemaError(first)}`, field }, base)
  }

  if (code === 'PARSE') {
    // A refusal made before the body was read (json-body.ts checks credentials first).
    const cause = apiErrorOf((error as { cause?: unknown } | null)?.cause)
    if (cause) return refusal(cause)
    // 401/403 come before any complaint about the body (as they do for a body that parses).
    try {
      await checkCredentials?.(request, surface)
    } catch (e) {
      const refused = apiErrorOf(e)
      if (refused) return refusal(refused)
      throw e
    }
    const body = bodyErrorOf(error)
    const field = fieldName(body.path.map(String).join('/'))
    if (body.status !== null) {
      return json(body.status, legacy ? { detail: `${field}: ${body.message}`, status: body.status } : { error: `${field}: ${body.message}`, field }, base)
    }
    if (legacy) return json(422, { detail: [{ loc: ['body', ...body.path], msg: body.message, type: body.kind }] }, base)
    return json(400, { error: `${field}: ${body.message}`, field }, base)
  }

  if (code === 'NOT_FOUND') {
    const message = `no route ${request.method} ${path}`
    return json(404, legacy ? { detail: message, status: 404 } : { error: message }, base)
  }

  const raw = (error as { status?: unknown } | null | undefined)?.status
  const status = typeof raw === 'number' && raw >= 400 ? raw : 500
  if (status >= 500) logger.error({ requestId, path, err: error }, 'unhandled error')
  const message = status >= 500 ? `server error (request ${requestId})` : (STATUS_TEXT[status] ?? 'error')
  return json(status, legacy ? { detail: message, status } : { error: message }, base)
}
