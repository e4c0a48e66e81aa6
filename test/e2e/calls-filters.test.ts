/**
 * Each GET /calls filter through the running server (docs/spec.md "List calls query"): `agent`,
 * `status`, `reference`, `since` / `until` (inclusive / exclusive, on when the try rang), `limit`
 * and `cursor`; a bad value of each answers 400 naming it (`{ error: '<field>: …' }`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const MIN = 60 * SEC
let s: TestServer
let key = ''
let ava = ''
let ben = ''
/** The calls placed, by what became of them, and when each rang (the clock at placement). */
const ids: Record<'completed' | 'missed' | 'failed' | 'connected' | 'cancelled' | 'ringing', string> = { completed: '', missed: '', failed: '', connected: '', cancelled: '', ringing: '' }
const rangAt: Record<string, string> = {}

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const phone = async (number: string, behaviour: Record<string, unknown>) => expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(number)}`, behaviour)).status).toBe(200)
const list = (query: string) => s.api('GET', `/calls?${query}`, { key })
const listed = async (query: string) => {
  const r = await list(query)
  expect(r.status).toBe(200)
  return (r.body.items as { id: string; status: string }[]).map((c) => c.id)
}
const refused = async (query: string, field: string) => {
  const r = await list(query)
  expect(r.status).toBe(400)
  expect(r.body.error).toStartWith(`${field}: `)
  return r.body.error as string
}

beforeAll(async () => {
  s = await startTestServer()
  const dev = await s.developer({ plan: 'pro', name: 'Filters' })
  key = dev.key
  ava = (await s.agent(key, { name: 'Ava', voice: { answersCalls: true } })).id
  ben = (await s.agent(key, { name: 'Ben', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553200', source: 'rented', agent: ava })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553210', source: 'rented', agent: ben })).status).toBe(201)
  const to = { completed: '+14155553201', missed: '+14155553202', failed: '+14155553203', connected: '+14155553204', cancelled: '+14155553205', ringing: '+14155553206' }
  for (const p of Object.values(to)) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: p })).status).toBe(201)
  // Rings out after 4 minutes (the console allows 5): the last two placed never get that far.
  await phone(to.completed, { pickup: 'answer', ringMs: 0, hangupAfterMs: 10 * SEC })
  await phone(to.missed, { pickup: 'no_answer', ringMs: 20 * SEC })
  await phone(to.failed, { pickup: 'refuse' })
  await phone(to.connected, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })
  await phone(to.cancelled, { pickup: 'answer', ringMs: 4 * MIN })
  await phone(to.ringing, { pickup: 'answer', ringMs: 4 * MIN })
  // One call a minute apart, so `since` / `until` can split them: Ava places three, Ben three.
  const plan: [keyof typeof ids, string, string | undefined][] = [
    ['completed', ava, 'order-1'],
    ['missed', ava, 'order-2'],
    ['failed', ben, undefined],
    ['connected', ben, 'order-1'],
    ['cancelled', ava, undefined],
    ['ringing', ben, undefined],
  ]
  for (const [what, agent, reference] of plan) {
    rangAt[what] = (await s.console('GET', '/clock')).body.now
    const r = await s.api('POST', '/calls', { key, body: { to: to[what], purpose: `The ${what} one`, agent, ...(reference ? { reference } : {}) } })
    expect(r.status).toBe(what === 'failed' ? 502 : 202)
    ids[what] = r.body.id
    if (what === 'cancelled') expect((await s.api('DELETE', `/calls/${r.body.id}`, { key })).status).toBe(202)
    await advance(MIN)
  }
  // By now the completed call hung up (10 s) and the missed one stopped ringing (20 s).
  for (const [what, status] of [
    ['completed', 'completed'],
    ['missed', 'missed'],
    ['failed', 'failed'],
    ['connected', 'connected'],
    ['cancelled', 'cancelled'],
    ['ringing', 'ringing'],
  ] as const) {
    await until(
      `${what} is ${status}`,
      () => s.api('GET', `/calls/${ids[what]}`, { key }),
      (r) => r.body.status === status,
    )
  }
})
afterAll(() => s?.stop())

const newestFirst = () => ['ringing', 'cancelled', 'connected', 'failed', 'missed', 'completed'].map((w) => ids[w as keyof typeof ids])

test('unfiltered: every try that rang, newest first', async () => {
  expect(await listed('')).toEqual(newestFirst())
})

describe('agent', () => {
  test("only that agent's calls; an agent id nobody has lists nothing", async () => {
    expect(await listed(`agent=${ava}`)).toEqual([ids.cancelled, ids.missed, ids.completed])
    expect(await listed(`agent=${ben}`)).toEqual([ids.ringing, ids.connected, ids.failed])
    expect(await listed('agent=ag_0000000000nobody')).toEqual([])
  })
  test('a value that is not an agent id (a name) is 400 naming agent', async () => {
    expect(await refused('agent=Ava', 'agent')).toContain('ag_')
    await refused('agent=', 'agent')
  })
})

describe('status', () => {
  test('each status a listed try can have', async () => {
    for (const status of ['ringing', 'connected', 'completed', 'missed', 'failed', 'cancelled'] as const) {
      expect(await listed(`status=${status}`)).toEqual([ids[status]])
    }
  })
  test('an unknown value, or scheduled (never listed), is 400 naming status and the values', async () => {
    const error = await refused('status=done', 'status')
    for (const status of ['ringing', 'connected', 'completed', 'missed', 'failed']) expect(error).toContain(status)
    await refused('status=scheduled', 'status')
    await refused('status=COMPLETED', 'status')
  })
})

describe('reference', () => {
  test('the calls placed with it; one nobody used lists nothing; over 200 characters is 400', async () => {
    expect(await listed('reference=order-1')).toEqual([ids.connected, ids.completed])
    expect(await listed('reference=order-2')).toEqual([ids.missed])
    expect(await listed('reference=order-3')).toEqual([])
    await refused(`reference=${'r'.repeat(201)}`, 'reference')
  })
})

describe('since and until', () => {
  test('since is inclusive and until exclusive, on when the try rang; combined with other filters', async () => {
    const at = (w: string) => encodeURIComponent(rangAt[w]!)
    expect(await listed(`since=${at('connected')}`)).toEqual([ids.ringing, ids.cancelled, ids.connected])
    expect(await listed(`until=${at('connected')}`)).toEqual([ids.failed, ids.missed, ids.completed])
    expect(await listed(`since=${at('missed')}&until=${at('cancelled')}`)).toEqual([ids.connected, ids.failed, ids.missed])
    expect(await listed(`since=${at('missed')}&until=${at('cancelled')}&agent=${ben}`)).toEqual([ids.connected, ids.failed])
  })
  test('a date alone is the start of that UTC day', async () => {
    const day = rangAt.completed!.slice(0, 10)
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    const all = await listed('')
    // The six calls span six minutes: they fall on the day they started or, near midnight, the next.
    const onDay = (await listed(`since=${day}&until=${next}`)).length + (await listed(`since=${next}`)).length
    expect(onDay).toBe(all.length)
    expect(await listed(`until=${day}`)).toEqual([])
  })
  test('values that are not dates or instants are 400 naming the field', async () => {
    await refused('since=yesterday', 'since')
    await refused('since=2026-02-30', 'since')
    await refused('until=12:00', 'until')
    await refused('until=2026-13-01T00:00:00Z', 'until')
  })
})

describe('limit and cursor', () => {
  test('pages of `limit` walk every call once, newest first; the last page has no cursor', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r = await list(`limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(r.status).toBe(200)
      expect(r.body.items.length).toBeLessThanOrEqual(4)
      seen.push(...r.body.items.map((c: { id: string }) => c.id))
      cursor = r.body.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(2)
    expect(seen).toEqual(newestFirst())
    // Filters hold across pages.
    const first = await list(`limit=1&agent=${ava}`)
    expect(first.body.items.map((c: { id: string }) => c.id)).toEqual([ids.cancelled])
    const second = await list(`limit=1&agent=${ava}&cursor=${encodeURIComponent(first.body.nextCursor)}`)
    expect(second.body.items.map((c: { id: string }) => c.id)).toEqual([ids.missed])
  })
  test('limit outside 1–100 or not a number, and a cursor this list did not hand out, are 400 naming them', async () => {
    for (const limit of ['0', '101', 'ten', '2.5']) await refused(`limit=${limit}`, 'limit')
    await refused('cursor=not-a-cursor', 'cursor')
  })
})
