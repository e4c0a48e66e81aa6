/**
 * JSON bodies are not coerced (issue: numbers are numbers): a string where the schema says integer,
 * number or boolean is a 400 naming the field (legacy: 422 with its loc), nested fields are named
 * by their path, and query strings keep their documented coercion. Every route's body schema is
 * walked so a coercing type cannot come back on a route added later.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let customer: string
let agent: string

const legacy = (method: string, path: string, body?: unknown) =>
  fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'pro' })
  customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Numbers' } })).body.id
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
})
afterAll(() => s?.stop())

/** Text that Elysia's integer transform would have read as a number. */
const NUMBERISH = ['   ', '\t', '0x10', '1e3', '12', '']

describe('v1 bodies', () => {
  for (const value of NUMBERISH) {
    test(`allottedCallLines ${JSON.stringify(value)} is a 400 naming the field, and nothing changes`, async () => {
      const r = await s.api('PATCH', `/customers/${customer}`, { key: dev.key, body: { allottedCallLines: value } })
      expect(r.status).toBe(400)
      expect(r.body.field).toBe('allottedCallLines')
      expect((await s.api('GET', `/customers/${customer}`, { key: dev.key })).body.allottedCallLines).toBeNull()
    })
  }

  test('numbers and booleans given as strings are refused, nested ones named by their path', async () => {
    const cases: [unknown, string][] = [
      [{ widget: { height: '   ' } }, 'widget.height'],
      [{ widget: { height: '500' } }, 'widget.height'],
      [{ voice: { maxCallSeconds: '   ' } }, 'voice.maxCallSeconds'],
      [{ voice: { maxCallSeconds: '120' } }, 'voice.maxCallSeconds'],
      [{ temperature: '1' }, 'temperature'],
      [{ captureLeads: 'true' }, 'captureLeads'],
      [{ voice: { recordCalls: 'yes' } }, 'voice.recordCalls'],
      [
        {
          steps: [
            { title: 'ok', detail: 'ok' },
            { title: 5, detail: 'x' },
          ],
        },
        'steps[1].title',
      ],
    ]
    for (const [body, field] of cases) {
      const patch = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body })
      expect({ body, status: patch.status, field: patch.body.field }).toEqual({ body, status: 400, field })
      const create = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bo', ...(body as object) } })
      expect({ body, status: create.status, field: create.body.field }).toEqual({ body, status: 400, field })
    }
    // Real numbers still pass.
    expect((await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { widget: { height: 500 }, voice: { maxCallSeconds: 120 } } })).status).toBe(200)
  })

  test('the console clock takes a number of ms, not text', async () => {
    const r = await s.console('POST', '/clock/advance', { ms: '1000' })
    expect(r.status).toBe(400)
    expect(r.body.error).toContain('ms')
  })

  test('query strings keep their documented coercion', async () => {
    const r = await s.api('GET', '/agents?limit=1', { key: dev.key })
    expect(r.status).toBe(200)
    expect(r.body.items).toHaveLength(1)
    expect((await s.api('GET', '/agents?limit=abc', { key: dev.key })).body).toMatchObject({ field: 'limit' })
  })
})

describe('legacy bodies', () => {
  test('max_retries and timeout_ms as strings are a 422 naming them under body, on create and update', async () => {
    for (const [member, value] of [
      ['max_retries', '   '],
      ['max_retries', '2'],
      ['timeout_ms', '   '],
      ['timeout_ms', '5000'],
    ] as const) {
      const create = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/x', event_types: ['lead.captured'], [member]: value })
      expect({ member, value, status: create.status, loc: create.body.detail?.[0]?.loc }).toEqual({ member, value, status: 422, loc: ['body', member] })
    }
    const ep = await legacy('POST', '/webhooks/endpoints', { url: 'https://1.1.1.1/x', event_types: ['lead.captured'], max_retries: 2 })
    expect(ep.body.endpoint.max_retries).toBe(2)
    const update = await legacy('PATCH', `/webhooks/endpoints/${ep.body.endpoint.id}`, { max_retries: '   ' })
    expect(update.status).toBe(422)
    expect(update.body.detail[0].loc).toEqual(['body', 'max_retries'])
    const timeout = await legacy('PATCH', `/webhooks/endpoints/${ep.body.endpoint.id}`, { timeout_ms: '  ' })
    expect(timeout.body.detail[0].loc).toEqual(['body', 'timeout_ms'])
    expect((await legacy('GET', `/webhooks/endpoints/${ep.body.endpoint.id}`)).body.endpoint.max_retries).toBe(2)
    // Path parameters are text: the integer id still reads.
    expect((await legacy('GET', `/webhooks/endpoints/${ep.body.endpoint.id}/deliveries?limit=5`)).status).toBe(200)
  })
})

/** True when a schema node accepts text for a number (Elysia's Integer/Numeric transforms). */
function coercingNodes(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return []
  const node = schema as Record<string, any>
  const found: string[] = []
  const textNumber = (n: any) => n && n.type === 'string' && (n.format === 'integer' || n.format === 'numeric' || n.format === 'boolean')
  if (Array.isArray(node.anyOf) && node.anyOf.some(textNumber)) found.push(at || '(root)')
  for (const [key, value] of Object.entries(node)) {
    if (key === 'anyOf' && found.length) continue
    if (value && typeof value === 'object') found.push(...coercingNodes(value, key === 'properties' || key === 'items' || key === 'anyOf' ? at : `${at}.${key}`))
  }
  return found
}

test('no route body schema coerces text into numbers', () => {
  const offenders: string[] = []
  for (const route of s.server.app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]) {
    const nodes = coercingNodes(route.hooks?.body)
    if (nodes.length) offenders.push(`${route.method} ${route.path}`)
  }
  expect(offenders).toEqual([])
  // The walker does find a coercing type where one is.
  expect(coercingNodes({ type: 'object', properties: { n: { anyOf: [{ type: 'string', format: 'integer' }, { type: 'integer' }] } } })).not.toEqual([])
})
