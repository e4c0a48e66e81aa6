/**
 * Calls end to end through the running server, the sandbox phone network and the manual clock:
 * an answered call hung up by the callee, a missed call retried and answered on attempt 2, a
 * scheduled call cancelled, a live call ended by DELETE, and the 403/409/429/502 refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const MIN = 60 * SEC
let s: TestServer

interface Setup {
  ws: string
  key: string
  agent: string
}

/** A developer with one phone agent on a rented number and the given contacts. */
async function setup(plan: string, contacts: string[], agentNumber: string): Promise<Setup> {
  const dev = await s.developer({ plan, name: `Calls ${plan}` })
  const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: agentNumber, source: 'rented', agent })).status).toBe(201)
  for (const phone of contacts) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  return { ws: dev.id, key: dev.key, agent }
}

const phone = (number: string, behaviour: Record<string, unknown>) => s.console('PUT', `/console/sandbox/phones/${encodeURIComponent(number)}`.replace('/console', ''), behaviour)
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const call = (key: string, id: string) => s.api('GET', `/calls/${id}`, { key })
const events = async (type: string, callId: string) => {
  const c = await s.server.services.store.collection<any>({ name: 'events', indexes: [] })
  return (await c.find({ type })).filter((e) => (e.data?.id ?? e.data?.callId) === callId)
}

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.stop())

describe('placing and ending calls', () => {
  let a: Setup
  beforeAll(async () => {
    a = await setup('pro', ['+14155550101', '+14155550102', '+14155550103', '+14155550104'], '+14155550999')
  })

  test('answered, then hung up by the callee: completed, one call.completed and one call.analysed', async () => {
    await phone('+14155550101', { pickup: 'answer', ringMs: 0, hangupAfterMs: 60 * SEC })
    const placed = await s.api('POST', '/calls', { key: a.key, body: { to: '+1 (415) 555-0101', purpose: 'Confirm your appointment tomorrow', reference: 'appt-1', metadata: { crm: 7 } } })
    expect(placed.status).toBe(202)
    expect(placed.body).toMatchObject({ to: '+14155550101', status: 'ringing' })
    expect(placed.body.id).toStartWith('out_')
    const id = placed.body.id
    await until(
      'answered',
      () => call(a.key, id),
      (r) => r.body.status === 'connected',
    )
    await advance(61 * SEC)
    const done = await until(
      'analysed',
      () => call(a.key, id),
      (r) => r.body.analysedAt !== null,
    )
    expect(done.body).toMatchObject({
      status: 'completed',
      hangup: 'answered',
      seconds: 60,
      attempt: 1,
      reference: 'appt-1',
      metadata: { crm: 7 },
      phone: '+14155550101',
      from: '+14155550999',
      agent: { id: a.agent, name: 'Caller' },
    })
    // Nobody spoke: no summary, no fields, never placeholders.
    expect(done.body.summary).toBeNull()
    expect(done.body.fields).toEqual({})
    expect(await events('call.completed', id)).toHaveLength(1)
    const analysed = await events('call.analysed', id)
    expect(analysed).toHaveLength(1)
    expect(analysed[0].data).toMatchObject({ id, status: 'completed', analysedAt: done.body.analysedAt })
    expect(await events('voice.call.ended', id)).toHaveLength(1)
    // In the inbox as a voice conversation.
    const inbox = await s.api('GET', '/conversations?channel=voice', { key: a.key })
    expect(inbox.body.items).toHaveLength(1)
    // Listed once, in the list form.
    const list = await s.api('GET', '/calls?reference=appt-1', { key: a.key })
    expect(list.body.items).toHaveLength(1)
    expect(list.body.items[0]).not.toHaveProperty('transcript')
  })

  test('missed, retried, answered on attempt 2: two rows and two call.analysed under one id', async () => {
    await phone('+14155550102', { pickup: 'no_answer', ringMs: 30 * SEC })
    const placed = await s.api('POST', '/calls', { key: a.key, body: { to: '14155550102', purpose: 'Your order is ready', retry: { maxAttempts: 2, delayMinutes: 10 } } })
    const id = placed.body.id
    await advance(31 * SEC)
    const missed = await until(
      'missed',
      () => call(a.key, id),
      (r) => r.body.status === 'missed',
    )
    expect(missed.body).toMatchObject({ attempt: 1, hangup: 'no_answer' })
    expect(missed.body.retryScheduledFor).toBeString()
    await phone('+14155550102', { pickup: 'answer', ringMs: 0, hangupAfterMs: 5 * SEC })
    await advance(10 * MIN)
    await until(
      'attempt 2 answered',
      () => call(a.key, id),
      (r) => r.body.attempt === 2 && r.body.status === 'connected',
    )
    await advance(6 * SEC)
    const done = await until(
      'attempt 2 analysed',
      () => call(a.key, id),
      (r) => r.body.attempt === 2 && r.body.analysedAt !== null,
    )
    expect(done.body).toMatchObject({ status: 'completed', attempt: 2 })
    const analysed = await events('call.analysed', id)
    expect(analysed.map((e) => [e.data.attempt, e.data.status])).toEqual([
      [1, 'missed'],
      [2, 'completed'],
    ])
    const rows = (await s.api('GET', '/calls?limit=100', { key: a.key })).body.items.filter((c: { id: string }) => c.id === id)
    expect(rows.map((c: { attempt: number }) => c.attempt).sort()).toEqual([1, 2])
  })

  test('a scheduled call waits, is not listed, and DELETE cancels it (200); it never rings', async () => {
    await phone('+14155550103', { pickup: 'answer', ringMs: 0 })
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 60 * MIN).toISOString()
    const placed = await s.api('POST', '/calls', { key: a.key, body: { to: '+14155550103', purpose: 'Reminder', scheduledFor: at } })
    expect(placed.body).toMatchObject({ status: 'scheduled' })
    expect(placed.body.id).toStartWith('sch_')
    const id = placed.body.id
    expect((await call(a.key, id)).body).toMatchObject({ status: 'scheduled', scheduledFor: at, startedAt: null })
    expect((await s.api('GET', '/calls?limit=100', { key: a.key })).body.items.map((c: { id: string }) => c.id)).not.toContain(id)
    const cancelled = await s.api('DELETE', `/calls/${id}`, { key: a.key })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'cancelled', hangup: 'cancelled' })
    await advance(2 * 60 * MIN)
    expect((await call(a.key, id)).body.status).toBe('cancelled')
    expect(await events('call.analysed', id)).toHaveLength(0)
    // Already ended: 409 with its report.
    const again = await s.api('DELETE', `/calls/${id}`, { key: a.key })
    expect(again.status).toBe(409)
  })

  test('a scheduled call rings at its time', async () => {
    await phone('+14155550103', { pickup: 'answer', ringMs: 0, hangupAfterMs: 10 * SEC })
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 30 * MIN).toISOString()
    const id = (await s.api('POST', '/calls', { key: a.key, body: { to: '+14155550103', purpose: 'Later', scheduledFor: at } })).body.id
    await advance(30 * MIN)
    await until(
      'rang',
      () => call(a.key, id),
      (r) => r.body.status === 'connected',
    )
    expect((await call(a.key, id)).body.id).toBe(id)
  })

  test('DELETE while ringing ends it at once (202); no retry follows', async () => {
    await phone('+14155550104', { pickup: 'answer', ringMs: 60 * SEC })
    const id = (await s.api('POST', '/calls', { key: a.key, body: { to: '+14155550104', purpose: 'Quick one', retry: { maxAttempts: 3, delayMinutes: 1 } } })).body.id
    const ended = await s.api('DELETE', `/calls/${id}`, { key: a.key })
    expect(ended.status).toBe(202)
    expect(ended.body).toMatchObject({ status: 'cancelled', hangup: 'cancelled', retryScheduledFor: null })
    await advance(5 * MIN)
    expect((await call(a.key, id)).body).toMatchObject({ status: 'cancelled', attempt: 1 })
    expect(await events('call.analysed', id)).toHaveLength(1)
  })
})

describe('inbound calls', () => {
  test('a call to an agent that answers: connected, analysed, counted as inbound, not listed', async () => {
    const i = await setup('pro', [], '+14155550992')
    const rang = await s.console('POST', '/sandbox/calls', { from: '+1 415 555 0901', to: '+14155550992', hangupAfterMs: 20 * SEC })
    expect(rang.status).toBe(201)
    expect(rang.body.answered).toBe(true)
    const rows = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    const [row] = await until(
      'the inbound row',
      () => rows.find({ workspaceId: i.ws, direction: 'inbound' }),
      (r) => r.length === 1,
    )
    expect(row).toMatchObject({ status: 'connected', phone: '+14155550901', from: '+14155550992', listed: false })
    await advance(21 * SEC)
    const [ended] = await until(
      'analysed',
      () => rows.find({ callId: row.callId }),
      (r) => r[0]?.analysedAt !== null,
    )
    expect(ended).toMatchObject({ status: 'completed', hangup: 'answered', seconds: 20 })
    expect(await events('call.analysed', row.callId)).toHaveLength(1)
    // Not a call the API placed: not listed, and GET is 404.
    expect((await s.api('GET', `/calls/${row.callId}`, { key: i.key })).status).toBe(404)
    expect((await s.api('GET', '/calls', { key: i.key })).body.items).toHaveLength(0)
    expect((await s.api('GET', '/calls/summary?days=1', { key: i.key })).body).toMatchObject({ calls: 1, inbound: 1, outbound: 0, answered: 1 })
  })

  test('nobody answers a number without an answering agent', async () => {
    const r = await s.console('POST', '/sandbox/calls', { from: '+14155550902', to: '+14155550000' })
    expect(r.body).toMatchObject({ answered: false })
  })
})

describe('waiting calls stop', () => {
  test('the person opts out before a booked call rings: cancelled, not_placed, a last call.analysed', async () => {
    const o = await setup('pro', ['+14155550701', '+14155550702'], '+14155550994')
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 60 * MIN).toISOString()
    const optOut = (await s.api('POST', '/calls', { key: o.key, body: { to: '+14155550701', purpose: 'Later', scheduledFor: at } })).body.id
    const dnc = (await s.api('POST', '/calls', { key: o.key, body: { to: '+14155550702', purpose: 'Later', scheduledFor: at } })).body.id
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    const [c1] = await contacts.find({ workspaceId: o.ws, phone: '+14155550701' })
    const [c2] = await contacts.find({ workspaceId: o.ws, phone: '+14155550702' })
    expect((await s.console('PATCH', `/workspaces/${o.ws}/contacts/${c1.id}`, { optedOut: true })).status).toBe(200)
    expect((await s.console('PATCH', `/workspaces/${o.ws}/contacts/${c2.id}`, { doNotCall: true })).status).toBe(200)
    const first = await until(
      'cancelled',
      () => call(o.key, optOut),
      (r) => r.body.status === 'cancelled',
    )
    expect(first.body).toMatchObject({ hangup: 'not_placed', error: 'the person opted out before the call rang' })
    expect(
      (
        await until(
          'cancelled',
          () => call(o.key, dnc),
          (r) => r.body.status === 'cancelled',
        )
      ).body.error,
    ).toContain('do-not-call')
    expect(await events('call.analysed', optOut)).toHaveLength(1)
    await advance(2 * 60 * MIN)
    expect((await call(o.key, optOut)).body.status).toBe('cancelled')
  })

  test('a booked call whose agent was deleted meanwhile is failed, not_placed, when its time comes', async () => {
    const g = await setup('pro', ['+14155550711'], '+14155550989')
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 30 * MIN).toISOString()
    const id = (await s.api('POST', '/calls', { key: g.key, body: { to: '+14155550711', purpose: 'Later', scheduledFor: at } })).body.id
    expect((await s.api('DELETE', `/agents/${g.agent}`, { key: g.key })).status).toBe(204)
    await advance(30 * MIN)
    const failed = await until(
      'failed',
      () => call(g.key, id),
      (r) => r.body.status === 'failed',
    )
    expect(failed.body).toMatchObject({ hangup: 'not_placed' })
    expect(failed.body.error).toContain('deleted before the call rang')
    expect(await events('call.analysed', id)).toHaveLength(1)
  })

  test("a deleted customer's booked calls are cancelled", async () => {
    const dev = await s.developer({ plan: 'pro', name: 'Has customers' })
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Calls customer' } })).body.id
    const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } }, customer)).id
    await s.console('POST', `/workspaces/${customer}/phone-numbers`, { number: '+14155550993', source: 'rented', agent })
    await s.console('POST', `/workspaces/${customer}/contacts`, { phone: '+14155550801' })
    const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + 60 * MIN).toISOString()
    const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550801', purpose: 'Later', scheduledFor: at }, workspace: customer })).body.id
    // The number goes back first (a customer holding one cannot be deleted).
    const numbers = await s.server.services.store.collection<any>({ name: 'phone_numbers', indexes: [] })
    await numbers.deleteMany({ workspaceId: customer })
    expect((await s.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
    const rows = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    await until(
      'cancelled',
      async () => (await rows.find({ callId: id }))[0],
      (r) => r.status === 'cancelled',
    )
  })
})

describe('refusals', () => {
  test('400 for an unreadable number or a missing purpose; 403 for a stranger or an opted-out contact', async () => {
    const b = await setup('pro', ['+14155550201'], '+14155550998')
    expect((await s.api('POST', '/calls', { key: b.key, body: { to: 'not a number', purpose: 'x' } })).body).toMatchObject({ field: 'to' })
    expect((await s.api('POST', '/calls', { key: b.key, body: { to: '+14155550201' } })).status).toBe(400)
    expect((await s.api('POST', '/calls', { key: b.key, body: { to: '+14155550201', purpose: 'x'.repeat(301) } })).body).toMatchObject({ field: 'purpose' })
    expect((await s.api('POST', '/calls', { key: b.key, body: { to: '+14155550299', purpose: 'Hi' } })).status).toBe(403)
    const contact = await s.console('POST', `/workspaces/${b.ws}/contacts`, { phone: '+14155550202', optedOut: true })
    expect(contact.status).toBe(201)
    expect((await s.api('POST', '/calls', { key: b.key, body: { to: '+14155550202', purpose: 'Hi' } })).status).toBe(403)
  })

  test('409 when no agent answers the phone', async () => {
    const dev = await s.developer({ plan: 'pro', name: 'No phone agent' })
    await s.api('POST', '/agents', { key: dev.key, body: { name: 'Chatty' } })
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550301' })
    const r = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550301', purpose: 'Hi' } })
    expect(r.status).toBe(409)
  })

  test('502 when the network will not place it; the call is recorded failed', async () => {
    const c = await setup('pro', ['+14155550401'], '+14155550997')
    await phone('+14155550401', { pickup: 'refuse' })
    const r = await s.api('POST', '/calls', { key: c.key, body: { to: '+14155550401', purpose: 'Hi', idempotencyKey: 'refused-call-1' } })
    expect(r.status).toBe(502)
    const id = r.body.id
    expect((await call(c.key, id)).body).toMatchObject({ status: 'failed', hangup: 'failed' })
    // A 502 releases the key: the same key may be tried again.
    await phone('+14155550401', { pickup: 'answer', hangupAfterMs: null })
    const again = await s.api('POST', '/calls', { key: c.key, body: { to: '+14155550401', purpose: 'Hi', idempotencyKey: 'refused-call-1' } })
    expect(again.status).toBe(202)
    const replay = await s.api('POST', '/calls', { key: c.key, body: { to: '+14155550401', purpose: 'Hi', idempotencyKey: 'refused-call-1' } })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.id).toBe(again.body.id)
  })

  test('429 with Retry-After when every call line is in use (free plan: 2 lines)', async () => {
    const f = await setup('free', ['+14155550501', '+14155550502', '+14155550503'], '+14155550996')
    for (const n of ['+14155550501', '+14155550502', '+14155550503']) await phone(n, { pickup: 'answer', hangupAfterMs: null })
    expect((await s.api('POST', '/calls', { key: f.key, body: { to: '+14155550501', purpose: 'One' } })).status).toBe(202)
    const second = await s.api('POST', '/calls', { key: f.key, body: { to: '+14155550502', purpose: 'Two' } })
    expect(second.status).toBe(202)
    const third = await s.api('POST', '/calls', { key: f.key, body: { to: '+14155550503', purpose: 'Three' } })
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBe('30') // lines busy: try again in 30 s
    // A line comes back when a call ends.
    expect((await s.api('DELETE', `/calls/${second.body.id}`, { key: f.key })).status).toBe(202)
    expect((await s.api('POST', '/calls', { key: f.key, body: { to: '+14155550503', purpose: 'Three' } })).status).toBe(202)
  })
})

test('call totals count what rang, in the workspace time zone', async () => {
  const t = await setup('pro', ['+14155550601'], '+14155550995')
  await phone('+14155550601', { pickup: 'answer', hangupAfterMs: 30 * SEC })
  const id = (await s.api('POST', '/calls', { key: t.key, body: { to: '+14155550601', purpose: 'Count me' } })).body.id
  await until(
    'answered',
    () => call(t.key, id),
    (r) => r.body.status === 'connected',
  )
  await advance(31 * SEC)
  await until(
    'completed',
    () => call(t.key, id),
    (r) => r.body.status === 'completed',
  )
  const totals = await s.api('GET', '/calls/summary?days=1', { key: t.key })
  expect(totals.status).toBe(200)
  expect(totals.body).toMatchObject({ days: 1, grain: 'hour', calls: 1, outbound: 1, answered: 1, seconds: 30, timezone: 'UTC' })
  expect(totals.body.series).toHaveLength(24)
})
