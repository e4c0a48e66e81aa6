/** Shared OpenAPI pieces: the error bodies every route documents next to its success answer. */
import { type TSchema, t } from 'elysia'
import type { OpenAPIV3 } from 'openapi-types'

export const ErrorBody = t.Object(
  {
    error: t.String({ description: 'plain-words message; a 400 starts with the offending field' }),
    field: t.Optional(t.String({ description: 'the offending field, on a 400' })),
    state: t.Optional(t.String({ description: 'the current state, when a move does not apply to it (409)' })),
  },
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
  429: 'too many requests, or too many refused credentials from this address (with Retry-After and X-RateLimit-*)',
  500: 'server error (the message quotes the request id)',
  501: 'not available yet',
  502: 'a provider refused',
  503: 'this instance is shutting down or at capacity, or coordination (Redis) is unavailable: nothing was done; retry after Retry-After',
  507: "the store's disk is full: nothing was saved; retry after Retry-After",
}

/**
 * Every route may meet an outage (http/outage.ts) or a drain (draining-gate.ts), and the brake on
 * refused credentials (auth-throttle.ts): documented on each.
 */
const OUTAGES = [429, 503, 507]

const errorBodies = (codes: Iterable<number>): Record<number, TSchema> =>
  Object.fromEntries([...codes].map((c) => [c, t.Object(ErrorBody.properties, { additionalProperties: true, description: DESCRIPTIONS[c] ?? 'error' })]))

/**
 * The error answers of a v1 route, named so a reader knows it adds more than it is given: 400, 401, 404, 410 and 500 always come with it, because every v1 route can answer
 * 401 (key) and, through `Service-Workspace`, 400 (no customers), 404 (unknown workspace) and
 * 410 (deleted customer), so those are always documented.
 */
export function v1Errors(...codes: number[]): Record<number, TSchema> {
  return errorBodies(new Set([401, 400, 404, 410, 500, ...OUTAGES, ...codes].sort()))
}

/** Error answers of a console route: 401 (console token) plus its own. */
export function consoleErrors(...codes: number[]): Record<number, TSchema> {
  return errorBodies(new Set([401, 500, ...OUTAGES, ...codes].sort()))
}

export function legacyErrors(...codes: number[]): Record<number, TSchema> {
  const all = new Set([401, 422, 500, ...OUTAGES, ...codes])
  return Object.fromEntries([...all].map((c) => [c, c === 422 ? LegacyValidationBody : t.Object(LegacyErrorBody.properties, { description: DESCRIPTIONS[c] ?? 'error' })]))
}

export const bearer = [{ bearer: [] as string[] }]

/**
 * The documented answers of a route (`detail.responses`) from the same TypeBox schemas the
 * services' presenters are written to. They feed the OpenAPI document and the test suite, which
 * checks every answer it receives against them (test/support/response-check.ts). They are not
 * re-validated on every request in production: that check cost about a quarter of the
 * throughput of a store read (bench:api), for a guarantee the suite already gives.
 */
export function answers(schemas: Record<number, TSchema>): OpenAPIV3.ResponsesObject {
  const out: OpenAPIV3.ResponsesObject = {}
  for (const [code, schema] of Object.entries(schemas)) {
    const status = Number(code)
    const description = (schema as { description?: string }).description ?? DESCRIPTIONS[status] ?? (status < 300 ? 'success' : 'error')
    const empty = status === 204 || (schema as { type?: string }).type === 'null'
    out[code] = empty ? { description } : { description, content: { 'application/json': { schema: schema as OpenAPIV3.SchemaObject } } }
  }
  return out
}
