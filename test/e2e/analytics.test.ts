import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { conversationsFeature } from '../../src/features/conversations'
import { startTestServer, type TestServer } from '../support/server'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Refunds

Tell us within 48 hours and we refund you in full. Refunds take 3 to 5 working days to reach your card.`

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR

let s: TestServer
let dev: { id: string; key: string }
let agent: string
let day1: string
let day2: string

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const nowMs = async () => Date.parse((await s.console('GET', '/clock')).body.now)
const say = async (message: string, session?: string) => {
  await advance(2000)
  const r = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: session ? { message, session } : { message } })
  if (r.status !== 200) throw new Error(`test chat: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.session as string
}
const analytics = (query = '') => s.api('GET', `/agents/${agent}/analytics${query}`, { key: dev.key })

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Counted' } })).body.id
  await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })

  // Move to 10:00 UTC on the next day, so every chat below lands in a known day and hour.
  const now = await nowMs()
  const nextDay = Math.floor(now / DAY) * DAY + DAY
  await advance(nextDay + 10 * HOUR - now)
  day1 = new Date(nextDay).toISOString().slice(0, 10)
  day2 = new Date(nextDay + DAY).toISOString().slice(0, 10)

  // Day 1, 10:00: one answered and one unanswered question, later resolved by a teammate.
  const a = await say('What are your opening hours on Sunday?')
  await say('Do you sell bicycles?', a)
  await s.server.services.of(conversationsFeature).conversations.resolve(dev.id, a)

  // Day 2, 15:00: the same unanswered question again (differently typed) and a lead, taken over
  // by a teammate; and an escalation in a third conversation.
  await advance(DAY + 5 * HOUR)
  const b = await say('do you sell bicycles')
  await say('My name is Asha Rao, email asha@example.com', b)
  await s.server.services.of(conversationsFeature).conversations.takeOver(dev.id, b)
  await say('Can I talk to a real person please?')
})
afterAll(() => s.stop())

describe('GET /agents/{id}/analytics', () => {
  test('totals, daily, hourly, channels, gaps, top questions and derived numbers', async () => {
    const r = await analytics('?days=7')
    expect(r.status).toBe(200)
    const a = r.body
    expect(a.days).toBe(7)
    expect(a.totals).toEqual({
      conversations: 3,
      customers: 3,
      messages: 10,
      agent_replies: 5,
      leads: 1,
      escalated: 1,
      resolved: 1,
      human_handled: 1,
      searches: 3,
      unanswered: 2,
    })
    expect(a.daily).toHaveLength(7)
    expect(a.daily[5]).toEqual({ day: day1, conversations: 1, replies: 2, leads: 0 })
    expect(a.daily[6]).toEqual({ day: day2, conversations: 2, replies: 3, leads: 1 })
    expect(a.daily.slice(0, 5).every((d: any) => d.conversations === 0 && d.replies === 0 && d.leads === 0)).toBe(true)
    expect(a.daily.map((d: any) => d.day)).toEqual([...a.daily.map((d: any) => d.day)].sort())
    expect(a.hourly).toHaveLength(24)
    expect(a.hourly[10]).toEqual({ hour: 10, conversations: 1 })
    expect(a.hourly[15]).toEqual({ hour: 15, conversations: 2 })
    expect(a.hourly.reduce((n: number, h: any) => n + h.conversations, 0)).toBe(3)
    expect(a.channels).toEqual([
      { kind: 'chatapp', conversations: 0 },
      { kind: 'web', conversations: 3 },
      { kind: 'botapp', conversations: 0 },
      { kind: 'voice', conversations: 0 },
      { kind: 'email', conversations: 0 },
    ])
    expect(a.knowledgeGaps).toHaveLength(1)
    expect(a.knowledgeGaps[0]).toMatchObject({ query: 'do you sell bicycles', asked: 2 })
    expect(a.knowledgeGaps[0].last_asked.slice(0, 10)).toBe(day2)
    expect(a.knowledgeGaps[0].best_similarity).toBeGreaterThanOrEqual(0)
    expect(a.knowledgeGaps[0].best_similarity).toBeLessThan(0.4)
    expect(a.topQuestions).toEqual([
      { query: 'do you sell bicycles', asked: 2, answered: 0, last_asked: a.knowledgeGaps[0].last_asked },
      { query: 'What are your opening hours on Sunday?', asked: 1, answered: 1, last_asked: expect.stringMatching(new RegExp(`^${day1}T10:`)) },
    ])
    expect(a.derived).toEqual({ neededAPerson: 2, answerRate: 0.3333 })
  })

  test('the window is the last `days` UTC days, today included; rows caps the lists', async () => {
    const today = (await analytics('?days=1&rows=1')).body
    expect(today.totals).toMatchObject({ conversations: 2, searches: 1, unanswered: 1, leads: 1 })
    expect(today.daily).toEqual([{ day: day2, conversations: 2, replies: 3, leads: 1 }])
    expect(today.topQuestions).toHaveLength(1)
    expect(today.derived.answerRate).toBe(0)
    const month = (await analytics()).body
    expect(month.days).toBe(30)
    expect(month.daily).toHaveLength(30)
    expect((await analytics('?rows=1')).body.topQuestions).toHaveLength(1)
  })

  test('an agent with no traffic: zeros, zero-filled series, answerRate null', async () => {
    const quiet = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Quiet' } })).body.id
    const r = await s.api('GET', `/agents/${quiet}/analytics?days=3`, { key: dev.key })
    expect(r.body.totals).toEqual({ conversations: 0, customers: 0, messages: 0, agent_replies: 0, leads: 0, escalated: 0, resolved: 0, human_handled: 0, searches: 0, unanswered: 0 })
    expect(r.body.daily.map((d: any) => d.conversations)).toEqual([0, 0, 0])
    expect(r.body.hourly).toHaveLength(24)
    expect(r.body.knowledgeGaps).toEqual([])
    expect(r.body.topQuestions).toEqual([])
    expect(r.body.derived).toEqual({ neededAPerson: 0, answerRate: null })
  })

  test('days and rows out of bounds are 400 naming them; a read key may read; another workspace is 404', async () => {
    for (const [query, field] of [
      ['?days=0', 'days'],
      ['?days=91', 'days'],
      ['?days=abc', 'days'],
      ['?rows=0', 'rows'],
      ['?rows=101', 'rows'],
      ['?days=2.5', 'days'],
    ]) {
      const r = await analytics(query)
      expect({ query, status: r.status, field: r.body.field }).toEqual({ query, status: 400, field })
    }
    expect((await s.api('GET', `/agents/${agent}/analytics?days=0`)).status).toBe(401)
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'reader', scope: 'read' })
    expect((await s.api('GET', `/agents/${agent}/analytics`, { key: read.body.key })).status).toBe(200)
    const other = await s.developer()
    expect((await s.api('GET', `/agents/${agent}/analytics`, { key: other.key })).status).toBe(404)
  })
})
