/**
 * The call rules calls.test.ts does not walk, through the running server and the sandbox network:
 * ending a connected call with DELETE (202, then completed and analysed, no retry, then 409 with its
 * report), the brought-number 409, the calls-a-minute 429 and a customer's allotted lines, and the
 * idempotency key (header over body, a concurrent duplicate placing nothing twice).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const MIN = 60 * SEC
let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.stop())

const phone = (number: string, behaviour: Record<string, unknown>) => s.console('PUT', `/sandbox/phones/${encodeURIComponent(number)}`, behaviour)
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const analysedEvents = async (callId: string) => {
  const c = await s.server.services.store.collection<any>({ name: 'events', indexes: [] })
  return (await c.find({ type: 'call.analysed' })).filter((e) => e.data?.id === callId)
}

/** A developer (or a customer inside one) with a phone agent on `number` and the given contacts. */
async function caller(plan: string, number: string, contacts: string[], source: 'rented' | 'brought' = 'rented', carrierCredentials?: boolean) {
  const dev = await s.developer({ plan, name: `Rules ${plan} ${number}` })
  const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
  const attached = await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source, agent, ...(carrierCredentials === undefined ? {} : { carrierCredentials }) })
  expect(attached.status).toBe(201)
  for (const p of contacts) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: p })).status).toBe(201)
  return { ws: dev.id, key: dev.key, agent }
}

test('DELETE of a connected call answers 202 with the report as it stands; it ends completed, is analysed once, no retry follows; a second DELETE is 409 with the report', async () => {
  const a = await caller('pro', '+14155551900', ['+14155551901'])
  await phone('+14155551901', { pickup: 'answer', ringMs: 0, hangupAfterMs: null })
  const id = (await s.api('POST', '/calls', { key: a.key, body: { to: '+14155551901', purpose: 'About your order', retry: { maxAttempts: 3, delayMinutes: 1 } } })).body.id
  await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: a.key }),
    (r) => r.body.status === 'connected',
  )
  await advance(20 * SEC)
  const ended = await s.api('DELETE', `/calls/${id}`, { key: a.key })
  expect(ended.status).toBe(202)
  expect(ended.body.id).toBe(id)
  const done = await until(
    'analysed',
    () => s.api('GET', `/calls/${id}`, { key: a.key }),
    (r) => r.body.analysedAt !== null,
  )
  expect(done.body).toMatchObject({ status: 'completed', hangup: 'cancelled', attempt: 1, retryScheduledFor: null, seconds: 20 })
  await advance(5 * MIN)
  expect((await s.api('GET', `/calls/${id}`, { key: a.key })).body.attempt).toBe(1)
  expect(await analysedEvents(id)).toHaveLength(1)
  const again = await s.api('DELETE', `/calls/${id}`, { key: a.key })
  expect(again.status).toBe(409)
  expect(again.body.call).toMatchObject({ id, status: 'completed' })
  // At the same instant the refusal is identical to the last one; it is still this DELETE's.
  const third = await s.api('DELETE', `/calls/${id}`, { key: a.key })
  expect(third.status).toBe(409)
  expect(third.body).toMatchObject({ state: 'completed', call: { id, status: 'completed' } })
})

test('409 when the only number is a brought one without carrier credentials, saying so', async () => {
  const b = await caller('pro', '+14155551910', ['+14155551911'], 'brought', false)
  const r = await s.api('POST', '/calls', { key: b.key, body: { to: '+14155551911', purpose: 'Hello' } })
  expect(r.status).toBe(409)
  expect(r.body.error).toContain('carrier credentials')
})

test('429 with Retry-After for the eleventh call in a minute on the free plan; the next minute accepts again', async () => {
  const numbers = Array.from({ length: 10 }, (_, i) => `+141555519${60 + i}`)
  const f = await caller('free', '+14155551920', numbers)
  // Each callee is busy: the try ends at once and gives its line back, so only the rate is tested.
  for (const n of numbers) await phone(n, { pickup: 'busy' })
  for (let i = 0; i < 10; i++) {
    const r = await s.api('POST', '/calls', { key: f.key, body: { to: numbers[i], purpose: `Call ${i}` } })
    expect(r.status).toBe(202)
    await until(
      'ended',
      () => s.api('GET', `/calls/${r.body.id}`, { key: f.key }),
      (x) => x.body.status === 'missed',
    )
  }
  const over = await s.api('POST', '/calls', { key: f.key, body: { to: numbers[0], purpose: 'One too many' } })
  expect(over.status).toBe(429)
  expect(over.body.error).toContain('10 calls a minute')
  const wait = Number(over.headers.get('retry-after'))
  expect(Number.isInteger(wait)).toBe(true)
  expect(wait).toBeGreaterThan(0)
  expect(wait).toBeLessThanOrEqual(60)
  await advance(wait * SEC)
  expect((await s.api('POST', '/calls', { key: f.key, body: { to: numbers[0], purpose: 'Next minute' } })).status).toBe(202)
})

test("a customer's allottedCallLines caps its own calls at once (429), while the developer's other lines stay free", async () => {
  const dev = await s.developer({ plan: 'pro', name: 'Reseller' })
  const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Clinic' } })).body.id
  expect((await s.api('PATCH', `/customers/${customer}`, { key: dev.key, body: { allottedCallLines: 1 } })).status).toBe(200)
  const agent = (await s.agent(dev.key, { name: 'Clinic caller', voice: { answersCalls: true } }, customer)).id
  expect((await s.console('POST', `/workspaces/${customer}/phone-numbers`, { number: '+14155551940', source: 'rented', agent })).status).toBe(201)
  for (const p of ['+14155551941', '+14155551942']) {
    expect((await s.console('POST', `/workspaces/${customer}/contacts`, { phone: p })).status).toBe(201)
    await phone(p, { pickup: 'answer', hangupAfterMs: null })
  }
  const first = await s.api('POST', '/calls', { key: dev.key, workspace: customer, body: { to: '+14155551941', purpose: 'One' } })
  expect(first.status).toBe(202)
  const second = await s.api('POST', '/calls', { key: dev.key, workspace: customer, body: { to: '+14155551942', purpose: 'Two' } })
  expect(second.status).toBe(429)
  expect(second.body.error).toContain("this customer's 1 allotted call lines")
  expect(second.headers.get('retry-after')).toBe('30') // lines busy: try again in 30 s
  // The developer's own calls still have lines.
  const own = await caller('pro', '+14155551943', ['+14155551944'])
  await phone('+14155551944', { pickup: 'answer', hangupAfterMs: null })
  expect((await s.api('POST', '/calls', { key: own.key, body: { to: '+14155551944', purpose: 'Mine' } })).status).toBe(202)
  // Ending the customer's call frees its line.
  expect((await s.api('DELETE', `/calls/${first.body.id}`, { key: dev.key, workspace: customer })).status).toBe(202)
  expect((await s.api('POST', '/calls', { key: dev.key, workspace: customer, body: { to: '+14155551942', purpose: 'Two' } })).status).toBe(202)
})

test('the Idempotency-Key header wins over the body key; concurrent duplicates place one call', async () => {
  const d = await caller('pro', '+14155551950', ['+14155551951'])
  await phone('+14155551951', { pickup: 'answer', ringMs: 60 * SEC })
  const body = { to: '+14155551951', purpose: 'Once only', idempotencyKey: 'body-key' }
  const first = await s.api('POST', '/calls', { key: d.key, body, headers: { 'idempotency-key': 'header-key' } })
  expect(first.status).toBe(202)
  const replay = await s.api('POST', '/calls', { key: d.key, body, headers: { 'idempotency-key': 'header-key' } })
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(replay.body.id).toBe(first.body.id)
  // The same key with another request is refused, not answered with an unrelated call.
  const other = await s.api('POST', '/calls', { key: d.key, body: { ...body, purpose: 'Something else' }, headers: { 'idempotency-key': 'header-key' } })
  expect(other.status).toBe(400)
  expect(other.body.error).toContain('Idempotency-Key')
  // The body key alone was never used (the header won), so it places a new call.
  const byBody = await s.api('POST', '/calls', { key: d.key, body })
  expect(byBody.status).toBe(202)
  expect(byBody.body.id).not.toBe(first.body.id)

  // Five at once with one key: one call placed; the others are 409 (still in flight) or replays of it.
  const burst = await Promise.all(Array.from({ length: 5 }, () => s.api('POST', '/calls', { key: d.key, body: { to: '+14155551951', purpose: 'Burst' }, headers: { 'idempotency-key': 'burst-key' } })))
  const placed = burst.filter((r) => r.status === 202 && r.headers.get('idempotent-replayed') !== 'true')
  expect(placed).toHaveLength(1)
  for (const r of burst) {
    if (r.status === 409) expect(r.body.error).toMatch(/idempotency|in flight|being processed/i)
    else expect(r.body.id).toBe(placed[0]!.body.id)
  }
  const rows = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
  expect((await rows.find({ workspaceId: d.ws, purpose: 'Burst' })).length).toBe(1)
})

test('overrides.voice must be one of the voices GET /voices lists (400 naming it otherwise)', async () => {
  const v = await caller('pro', '+14155551960', ['+14155551961'])
  await phone('+14155551961', { pickup: 'answer', ringMs: 60 * SEC })
  const unknown = await s.api('POST', '/calls', { key: v.key, body: { to: '+14155551961', purpose: 'Hi', overrides: { voice: 'nobody' } } })
  expect(unknown.status).toBe(400)
  expect(unknown.body.field).toBe('overrides.voice')
  const voice = (await s.api('GET', '/voices', { key: v.key })).body.items.at(-1).id
  expect((await s.api('POST', '/calls', { key: v.key, body: { to: '+14155551961', purpose: 'Hi', overrides: { voice } } })).status).toBe(202)
})

test('the agent of a call: the only phone agent among others, several need a name (by name or id), a deleted one is not chosen', async () => {
  const dev = await s.developer({ plan: 'pro', name: 'Rules agents' })
  const create = async (name: string, voice: boolean, number?: string) => {
    const id = (await s.agent(dev.key, { name, ...(voice ? { voice: { answersCalls: true } } : {}) })).id as string
    if (number) expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent: id })).status).toBe(201)
    return id
  }
  await create('Chatty', false)
  const ava = await create('Ava', true, '+14155552800')
  await create('Ben', true) // voice on, no number: not on the phone
  for (const p of ['+14155552801', '+14155552802', '+14155552803', '+14155552804']) {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: p })).status).toBe(201)
    await phone(p, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })
  }
  const place = (to: string, agent?: string) => s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'Hi', ...(agent === undefined ? {} : { agent }) } })
  const agentOf = async (id: string) => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body.agent.id

  const only = await place('+14155552801')
  expect(only.status).toBe(202)
  expect(await agentOf(only.body.id)).toBe(ava)

  const cleo = await create('Cleo', true, '+14155552810')
  const several = await place('+14155552802')
  expect(several.status).toBe(400)
  expect(several.body).toMatchObject({ field: 'agent' })
  expect(several.body.error).toContain('Cleo, Ava')
  expect((await place('+14155552802', 'ben')).status).toBe(409)
  const byName = await place('+14155552802', 'cleo')
  expect(byName.status).toBe(202)
  expect(await agentOf(byName.body.id)).toBe(cleo)
  const byId = await place('+14155552803', ava)
  expect(byId.status).toBe(202)
  expect(await agentOf(byId.body.id)).toBe(ava)
  expect((await place('+14155552803', 'ag_nobody')).body).toMatchObject({ field: 'agent' })

  expect((await s.api('DELETE', `/agents/${ava}`, { key: dev.key })).status).toBeLessThan(300)
  await until(
    'deleted',
    () => s.api('GET', `/agents/${ava}`, { key: dev.key }),
    (r) => r.status === 404,
  )
  const after = await place('+14155552804')
  expect(after.status).toBe(202)
  expect(await agentOf(after.body.id)).toBe(cleo)
})
