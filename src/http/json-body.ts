/**
 * SPEC.md Conventions rule 1: bodies are JSON objects. One parser owns every body rule, so it runs
 * only for requests that carry a body (reads never pay for it):
 * - a body sent with another content type is refused (Elysia would parse forms and plain text, so
 *   a form post could create an agent);
 * - malformed JSON is refused;
 * - a JSON value that is not an object is refused (Elysia folds `[]`, `5` or `true` into `{}` when
 *   every field is optional, so a PATCH answered 200 having done nothing).
 * Elysia wraps what a parser throws in a ParseError; the error plugin finds the BodyError inside,
 * checks the caller's credentials first (401/403 come before any complaint about the body), then
 * answers 400 `body: …` on v1 and the console, 422 `loc: ["body"]` on legacy.
 */
import { Elysia } from 'elysia'

export class BodyError extends Error {
  constructor(
    message: string,
    /** The legacy 422 `type`. */
    readonly kind: 'json_invalid' | 'value_error',
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

export function jsonBodies() {
  return new Elysia({ name: 'json-bodies' }).onParse({ as: 'global' }, async ({ request, contentType }) => {
    // No body: Elysia's own handling (none) stands.
    if (!hasBody(request)) return
    const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
    if (type !== 'application/json' && !type.endsWith('+json')) {
      throw new BodyError(`must be JSON, sent with Content-Type: application/json (got ${type || 'no content type'})`, 'value_error')
    }
    let value: unknown
    try {
      value = JSON.parse(await request.text())
    } catch {
      throw new BodyError('not valid JSON', 'json_invalid')
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BodyError('must be an object', 'value_error')
    return value
  })
}
