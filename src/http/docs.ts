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
  400: 'a field is wrong (the message names it), or Service-Workspace was sent by a workspace without customers',
  401: 'missing, wrong or revoked key',
  402: 'the plan limit is reached',
  403: 'the key may not do this',
  404: 'not found in this workspace, or an unknown Service-Workspace',
  409: 'conflicts with the current state',
  410: 'the customer workspace was deleted (with deletedAt and eraseAfter)',
  422: 'request validation failed',
  429: 'too many requests',
  501: 'not available yet',
  502: 'a provider refused',
}

const errorBodies = (codes: Iterable<number>): Record<number, TSchema> =>
  Object.fromEntries([...codes].map((c) => [c, t.Object(ErrorBody.properties, { additionalProperties: true, description: DESCRIPTIONS[c] ?? 'error' })]))

/**
 * `{ 400: ErrorBody, 401: ErrorBody, … }` for a v1 route's `response`. Every v1 route can answer
 * 401 (key) and, through `Service-Workspace`, 400 (no customers), 404 (unknown workspace) and
 * 410 (deleted customer), so those are always documented.
 */
export function errors(...codes: number[]): Record<number, TSchema> {
  return errorBodies(new Set([401, 400, 404, 410, ...codes].sort()))
}

/** Error answers of a console route: 401 (console token) plus its own. */
export function consoleErrors(...codes: number[]): Record<number, TSchema> {
  return errorBodies(new Set([401, ...codes].sort()))
}

export function legacyErrors(...codes: number[]): Record<number, TSchema> {
  const all = new Set([401, 422, ...codes])
  return Object.fromEntries([...all].map((c) => [c, c === 422 ? LegacyValidationBody : t.Object(LegacyErrorBody.properties, { description: DESCRIPTIONS[c] ?? 'error' })]))
}

export const bearer = [{ bearer: [] as string[] }]
