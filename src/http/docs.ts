/** Shared OpenAPI pieces: the error bodies every route documents next to its success answer. */
import { t, type TSchema } from 'elysia'

export const ErrorBody = t.Object(
  { error: t.String({ description: 'plain-words message; a 400 starts with the offending field' }) },
  { additionalProperties: true, description: 'v1 error' },
)

export const LegacyErrorBody = t.Object({ detail: t.String(), status: t.Integer() }, { description: 'legacy error' })

export const LegacyValidationBody = t.Object(
  { detail: t.Array(t.Object({ loc: t.Array(t.Union([t.String(), t.Integer()])), msg: t.String(), type: t.String() })) },
  { description: 'legacy request validation failure' },
)

const DESCRIPTIONS: Record<number, string> = {
  400: 'a field is wrong (the message names it)',
  401: 'missing, wrong or revoked key',
  402: 'the plan limit is reached',
  403: 'the key may not do this',
  404: 'not found in this workspace',
  409: 'conflicts with the current state',
  410: 'the customer workspace was deleted',
  422: 'request validation failed',
  429: 'too many requests',
  501: 'not available yet',
  502: 'a provider refused',
}

/** `{ 400: ErrorBody, 401: ErrorBody, … }` for a route's `response`; every v1 route also gets 401. */
export function errors(...codes: number[]): Record<number, TSchema> {
  const all = new Set([401, ...codes])
  return Object.fromEntries([...all].map((c) => [c, t.Object(ErrorBody.properties, { additionalProperties: true, description: DESCRIPTIONS[c] ?? 'error' })]))
}

export function legacyErrors(...codes: number[]): Record<number, TSchema> {
  const all = new Set([401, 422, ...codes])
  return Object.fromEntries([...all].map((c) => [c, c === 422 ? LegacyValidationBody : t.Object(LegacyErrorBody.properties, { description: DESCRIPTIONS[c] ?? 'error' })]))
}

export const bearer = [{ bearer: [] as string[] }]
