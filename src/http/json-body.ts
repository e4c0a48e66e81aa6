/**
 * SPEC.md Conventions rule 1: bodies are JSON. Elysia would also parse form encodings and plain
 * text, so a form post could create an agent; a body sent with another content type is refused
 * here, naming the body, before anything reads it.
 */
import { badRequest } from './errors'

export function requireJsonBody(request: Request): void {
  const length = request.headers.get('content-length')
  const hasBody = (length !== null && length !== '0') || request.headers.has('transfer-encoding')
  if (!hasBody) return
  const type = (request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw badRequest('body', `must be JSON, sent with Content-Type: application/json (got ${type || 'no content type'})`)
  }
}
