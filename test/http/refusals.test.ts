/**
 * A service's domain refusal (src/refusals.ts) thrown through a route answers as the HTTP
 * refusal it maps to (src/http/refusals.ts): its status, the v1 `{ error, field }` or legacy
 * `{ detail, status }` shape, and, under an Idempotency-Key, the same refusal again on a repeat.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { openLocalCoordination } from '../../src/coordination/local'
import type { Coordination } from '../../src/coordination/port'
import { errorPlugin } from '../../src/http/error-plugin'
import { idempotent } from '../../src/http/idempotency'
import { rateLimited } from '../../src/http/rate-limit'
import { createLogger } from '../../src/logger'
import { clashes, gone, invalid, notAllowed, notCovered, notOffered, notThere, tooMany, unavailable, unrecognised, upstreamFailed } from '../../src/refusals'

let app: { stop(): Promise<void> } & any
let base: string
let coordination: Coordination

const refusals = {
  invalid: () => invalid('phone', 'is not a phone number'),
  missing: () => notThere('no contact ct_1'),
  clash: () => clashes('a contact with phone +1 exists', { id: 'ct_1' }),
  denied: () => notAllowed('not yours'),
  stranger: () => unrecognised('session: not a session of this widget', { field: 'session' }),
  unpaid: () => notCovered('the free plan allows 1 customer'),
  deleted: () => gone('customer cu_1 was deleted', { deletedAt: '2026-01-01T00:00:00.000Z' }),
  hurried: () => tooMany('calls a minute used up', 2.2),
  vendor: () => upstreamFailed('the phone network would not place the call', { id: 'call_1' }),
  busy: () => unavailable('at capacity', 5, { reason: 'cpu' }),
  unbuilt: () => notOffered('website chat is not built into this service'),
  limited: () =>
    rateLimited(
      { allowed: false, limit: 1, count: 2, remaining: 0, resetAt: 61_000 },
      1_000,
      (s) => `one a minute; retry in ${s} s`,
      (retryAfter) => ({ retryAfter }),
    ),
}

beforeAll(async () => {
  coordination = await openLocalCoordination(':memory:')
  app = new Elysia({ normalize: false })
    .use(errorPlugin(createLogger('silent')))
    .get('/api/v1/refuse/:what', ({ params }) => {
      throw refusals[params.what as keyof typeof refusals]()
    })
    .get('/refuse/:what', ({ params }) => {
      throw refusals[params.what as keyof typeof refusals]()
    })
    .listen({ port: 0, hostname: '127.0.0.1' })
  base = `http://127.0.0.1:${app.server.port}`
})
afterAll(async () => {
  await app.stop()
  await coordination.close()
})

test('each reason answers its status in the v1 shape, the offending field named', async () => {
  const answers = await Promise.all(Object.keys(refusals).map(async (what) => [what, await fetch(`${base}/api/v1/refuse/${what}`)] as const))
  const seen = await Promise.all(answers.map(async ([what, r]) => [what, r.status, await r.json()]))
  expect(seen).toEqual([
    ['invalid', 400, { error: 'phone: is not a phone number', field: 'phone' }],
    ['missing', 404, { error: 'no contact ct_1' }],
    ['clash', 409, { error: 'a contact with phone +1 exists', id: 'ct_1' }],
    ['denied', 403, { error: 'not yours' }],
    ['stranger', 401, { error: 'session: not a session of this widget', field: 'session' }],
    ['unpaid', 402, { error: 'the free plan allows 1 customer' }],
    ['deleted', 410, { error: 'customer cu_1 was deleted', deletedAt: '2026-01-01T00:00:00.000Z' }],
    ['hurried', 429, { error: 'calls a minute used up' }],
    ['vendor', 502, { error: 'the phone network would not place the call', id: 'call_1' }],
    ['busy', 503, { error: 'at capacity', reason: 'cpu' }],
    ['unbuilt', 501, { error: 'website chat is not built into this service' }],
    ['limited', 429, { error: 'one a minute; retry in 60 s', retryAfter: 60 }],
  ])
})

test('a refusal that passes with time says when to try again, in whole seconds', async () => {
  const [hurried, busy, denied] = await Promise.all(['hurried', 'busy', 'denied'].map((what) => fetch(`${base}/api/v1/refuse/${what}`)))
  expect([hurried!.headers.get('retry-after'), busy!.headers.get('retry-after'), denied!.headers.get('retry-after')]).toEqual(['3', '5', null])
})

test("a rate rule's refusal carries its X-RateLimit-* headers, then Retry-After", async () => {
  const r = await fetch(`${base}/api/v1/refuse/limited`)
  const named = [...r.headers].filter(([name]) => name.startsWith('x-ratelimit-') || name === 'retry-after')
  expect(named).toEqual([
    ['retry-after', '60'],
    ['x-ratelimit-limit', '1'],
    ['x-ratelimit-remaining', '0'],
    ['x-ratelimit-reset', '61'],
  ])
})

test('the legacy surface answers the same refusal as { detail, status }', async () => {
  const r = await fetch(`${base}/refuse/missing`)
  expect(r.status).toBe(404)
  expect(await r.json()).toEqual({ detail: 'no contact ct_1', status: 404 })
})

test('under an Idempotency-Key a refusal is the stored answer: the repeat gets it without running', async () => {
  let runs = 0
  const run = async () => {
    runs++
    throw clashes('a contact with phone +1 exists', { id: 'ct_1' })
  }
  await expect(idempotent(coordination, 's', 'k-refused', {}, run)).rejects.toThrow('a contact with phone +1 exists')
  expect(await idempotent(coordination, 's', 'k-refused', {}, run)).toEqual({ status: 409, body: { error: 'a contact with phone +1 exists', id: 'ct_1' }, replayed: true })
  expect(runs).toBe(1)
})

test('under an Idempotency-Key a refusal that passes with time releases the key: the repeat runs again', async () => {
  let runs = 0
  const run = async () => {
    runs++
    throw runs === 1 ? unavailable('at capacity', 5) : upstreamFailed('the network refused')
  }
  await expect(idempotent(coordination, 's', 'k-busy', {}, run)).rejects.toThrow('at capacity')
  await expect(idempotent(coordination, 's', 'k-busy', {}, run)).rejects.toThrow('the network refused')
  expect(runs).toBe(2)
})
