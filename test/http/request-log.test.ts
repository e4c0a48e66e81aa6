/**
 * The request log records the status the client was sent, whatever answered: a route (with a value
 * or a Response of its own), the error plugin (a validation 400 that Elysia calls 422, a refusal,
 * a "no route" 404), or the body parser.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let key: string
const { logger, lines } = capturedLogger('info')

beforeAll(async () => {
  s = await startTestServer({}, undefined, logger)
  key = (await s.developer()).key
})
afterAll(async () => {
  await s?.stop()
})

/** Sends a request and answers the status sent and the status logged for it (by request id). */
async function sentAndLogged(method: string, path: string, init: { key?: string; body?: string } = {}): Promise<{ sent: number; logged: number[] }> {
  const headers: Record<string, string> = {}
  if (init.key) headers.authorization = `Bearer ${init.key}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${s.url}${path}`, { method, headers, body: init.body })
  await res.arrayBuffer()
  const id = res.headers.get('x-request-id')
  expect(id).toBeTruthy()
  // The line is written after the answer has gone out.
  const read = () => lines.filter((l) => l.msg === 'request' && l.requestId === id).map((l) => l.status)
  const logged = await until(`the request line of ${id}`, read, (l) => l.length > 0, { everyMs: 5 }).catch(read)
  return { sent: res.status, logged }
}

const CASES: [string, string, string, { key?: boolean; body?: string }][] = [
  ['a route’s 200', 'GET', '/api/v1/agents', { key: true }],
  ['a route’s 201', 'POST', '/api/v1/agents', { key: true, body: JSON.stringify({ name: 'Ava' }) }],
  ['a v1 validation failure (400, Elysia’s 422)', 'POST', '/api/v1/agents', { key: true, body: JSON.stringify({ name: 5 }) }],
  ['a legacy validation failure (422)', 'POST', '/webhooks/endpoints', { key: true, body: JSON.stringify({ url: 5 }) }],
  ['a body that is not JSON (400)', 'POST', '/api/v1/agents', { key: true, body: '{not json' }],
  ['no key (401)', 'GET', '/api/v1/agents', {}],
  ['a v1 "no route" 404', 'GET', '/api/v1/no-such-thing', { key: true }],
  ['a legacy "no route" 404', 'GET', '/no-such-thing', {}],
  ['a route’s own 404', 'GET', '/api/v1/agents/ag_nosuchagent000', { key: true }],
  ['a bad query value (400)', 'GET', '/api/v1/agents?limit=abc', { key: true }],
  ['a 404 a route answers as a Response of its own', 'GET', '/w/wk_nosuchkey0000000000', {}],
]

for (const [what, method, path, opts] of CASES) {
  test(`${what}: the logged status is the one sent`, async () => {
    const { sent, logged } = await sentAndLogged(method, path, { key: opts.key ? key : undefined, body: opts.body })
    expect(logged).toEqual([sent])
  })
}

test('the cases above do answer the statuses they are named for', async () => {
  const sent = []
  for (const [, method, path, opts] of CASES) sent.push((await sentAndLogged(method, path, { key: opts.key ? key : undefined, body: opts.body })).sent)
  expect(sent).toEqual([200, 201, 400, 422, 400, 401, 404, 404, 404, 400, 404])
})
