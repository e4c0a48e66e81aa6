/**
 * POST /calls takes its idempotency key from the `Idempotency-Key` header or the body member
 * `idempotencyKey`. With the header, the body member is ignored entirely: two requests that differ
 * only in it are the same request (replayed). Without the header, a 400 about the key names the
 * body member, not the header the caller never sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let key = ''

beforeAll(async () => {
  s = await startTestServer()
  const dev = await s.developer({ plan: 'pro', name: 'Idempotent' })
  key = dev.key
  const agent = await s.agent(key, { name: 'Caller', voice: { answersCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553100', source: 'rented', agent: agent.id })).status).toBe(201)
  for (const phone of ['+14155553101', '+14155553102']) {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    // Rings for a minute of the (manual) clock: every call stays ringing, so nothing ends meanwhile.
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 60_000 })).status).toBe(200)
  }
})
afterAll(() => s?.stop())

const place = (body: Record<string, unknown>, header?: string) => s.api('POST', '/calls', { key, body, headers: header === undefined ? {} : { 'idempotency-key': header } })

test('with the header, a different body idempotencyKey is the same request: replayed, not 400', async () => {
  const body = { to: '+14155553101', purpose: 'About your order' }
  const first = await place({ ...body, idempotencyKey: 'body-one' }, 'header-key')
  expect(first.status).toBe(202)
  const again = await place({ ...body, idempotencyKey: 'body-two' }, 'header-key')
  expect(again.status).toBe(202)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.body.id).toBe(first.body.id)
  // Without any body member too: the same request.
  const bare = await place(body, 'header-key')
  expect(bare.headers.get('idempotent-replayed')).toBe('true')
  expect(bare.body.id).toBe(first.body.id)
  // A real difference is still refused, naming the header that carried the key.
  const other = await place({ ...body, purpose: 'Something else', idempotencyKey: 'body-one' }, 'header-key')
  expect(other.status).toBe(400)
  expect(other.body.error).toStartWith('Idempotency-Key: ')
})

test('the body key alone replays, and its 400s name idempotencyKey, not the header', async () => {
  const body = { to: '+14155553102', purpose: 'Your delivery' }
  const first = await place({ ...body, idempotencyKey: 'only-body' })
  expect(first.status).toBe(202)
  const again = await place({ ...body, idempotencyKey: 'only-body' })
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.body.id).toBe(first.body.id)

  const reused = await place({ ...body, purpose: 'Another thing', idempotencyKey: 'only-body' })
  expect(reused.status).toBe(400)
  expect(reused.body.error).toStartWith('idempotencyKey: ')

  for (const bad of ['has spaces', 'clé', 'x'.repeat(256)]) {
    const r = await place({ ...body, idempotencyKey: bad })
    expect(r.status).toBe(400)
    expect(r.body.error).toStartWith('idempotencyKey: ')
  }
  // The same bad key in the header names the header.
  const header = await place(body, 'has spaces')
  expect(header.status).toBe(400)
  expect(header.body.error).toStartWith('Idempotency-Key: ')
})
