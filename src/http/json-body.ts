/**
 * SPEC.md Conventions rule 1: bodies are JSON objects. Elysia would also parse form encodings and
 * plain text (a form post could create an agent), and it folds a JSON body that is not an object
 * (`[]`, `5`, `true`) into `{}` when every field is optional, so a PATCH answered 200 having done
 * nothing. Both are refused here, after authentication and before validation: the content type
 * with a 400 naming the body, a non-object body as a validation failure of the body (400 on v1,
 * 422 `loc: ["body"]` on legacy).
 */
import { t, ValidationError } from 'elysia'
import { badRequest } from './errors'

const AnObject = t.Object({}, { description: 'a JSON object' })

export function requireJsonBody(request: Request, body: unknown): void {
  const length = request.headers.get('content-length')
  const hasBody = (length !== null && length !== '0') || request.headers.has('transfer-encoding')
  if (!hasBody) return
  const type = (request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw badRequest('body', `must be JSON, sent with Content-Type: application/json (got ${type || 'no content type'})`)
  }
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw new ValidationError('body', AnObject, body)
  }
}
