/**
 * A `transform` hook refusing a JSON body that is not an object. Elysia validates a body whose
 * fields are all optional (the PATCH bodies) only when it is a non-empty object, and folds what it
 * skipped into `{}`: `[]`, `5` or `true` reached the handler as "change nothing" and answered 200.
 * Transform hooks run before validation, on the body as parsed; the ValidationError it throws
 * goes through the error plugin like any other ("body: must be an object" on v1, 422 with
 * `loc: ["body"]` on legacy).
 */
import { ValidationError, type TSchema } from 'elysia'

export function objectBody(schema: TSchema) {
  return ({ body }: { body: unknown }): void => {
    // No body at all is left to the schema (an empty PATCH changes nothing).
    if (body === undefined) return
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError('body', schema, body)
  }
}
