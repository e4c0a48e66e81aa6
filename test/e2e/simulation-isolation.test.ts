/**
 * What a simulations run must leave alone, checked on the real endpoints: the agent's analytics
 * (conversations, messages, replies, leads, knowledge searches), money (the ledger, the wallet,
 * the reply allowance) and webhooks (`call.*` only with `webhooks: true`; `simulation.finished`
 * always). A test chat is the control: analytics does count it, so a zero is not a broken count.
 *
 * Speech engines: the sandbox doubles; the manual clock; a real webhook receiver on loopback.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Receiver, startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, HOURS_FAQ, runSuite } from '../support/simulations'
import { until } from '../support/until'

let s: TestServer
let rx: Receiver
let dev: { id: string; key: string }
let agent: string
let suiteId: string

beforeAll(async () => {
  rx = startReceiver()
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  dev = await s.developer({ plan: 'pro', name: 'Isolated' })
  agent = await agentWithFaq(
    s,
    dev.key,
    {
      name: 'Bean There',
      greeting: 'Hello from Bean There!',
      captureLeads: true,
      voice: { answersCalls: true, recordCalls: false },
      collectFields: [{ name: 'email', description: "the caller's email" }],
    },
    HOURS_FAQ,
  )
  // Every event of the agent (no `events` list).
  expect((await s.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `${rx.url}/hook` } })).status).toBe(201)
  const scenario = await api('POST', '/simulations/scenarios', {
    name: 'Asks and leaves an email',
    caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'My email is priya@example.com' }] },
    expectations: [
      { kind: 'tool', name: 'search_knowledge' },
      { kind: 'tool', name: 'capture_lead' },
    ],
  })
  expect(scenario.status).toBe(201)
  suiteId = (await api('POST', '/simulations/suites', { name: 'Isolation', agent, scenarios: [scenario.body.id] })).body.id
})
afterAll(async () => {
  await s?.stop()
  await rx?.stop()
})

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })

const runToEnd = (body: Record<string, unknown>) => runSuite(s, dev.key, suiteId, body)

const events = (type: string) => rx.received.filter((r) => r.json?.event === type)

describe('a simulations run stays out of analytics, money and call webhooks', () => {
  test('without webhooks: nothing counted, nothing charged, no call.* webhook; simulation.finished sent', async () => {
    const usageBefore = (await api('GET', '/usage')).body
    const run = await runToEnd({ target: 'draft' })
    expect(run.results[0].status).toBe('passed')
    const callId = run.results[0].call.id
    await until('simulation.finished delivered', async () => (events('simulation.finished').some((r) => r.json.data.id === run.id) ? true : undefined), WAIT_MS)

    const analytics = (await api('GET', `/agents/${agent}/analytics?days=1`)).body
    expect(analytics.totals).toMatchObject({ conversations: 0, customers: 0, messages: 0, agent_replies: 0, leads: 0, searches: 0, unanswered: 0 })
    expect(analytics.channels.find((c: any) => c.kind === 'voice').conversations).toBe(0)
    expect(analytics.topQuestions).toEqual([])

    const ledger = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    expect(await ledger.count({ workspaceId: dev.id })).toBe(0)
    const usageAfter = (await api('GET', '/usage')).body
    expect(usageAfter.wallet).toEqual(usageBefore.wallet)
    expect(usageAfter.replies).toEqual(usageBefore.replies)

    expect(rx.received.filter((r) => String(r.json?.event).startsWith('call.'))).toEqual([])
    // Its lead is raised as a test one, marked simulated, so a receiver can tell it from a customer's.
    const lead = events('lead.captured').find((r) => r.json.data.channel === 'voice')
    expect(lead?.json.data).toMatchObject({ test: true, simulated: true, email: 'priya@example.com' })
    expect((await api('GET', `/calls/${callId}`)).body.status).toBe('completed')

    // The control: a test chat is counted, so the zeros above are the run's absence.
    expect((await api('POST', `/agents/${agent}/test-chat`, { message: 'What time do you open on Saturday?' })).status).toBe(200)
    const counted = (await api('GET', `/agents/${agent}/analytics?days=1`)).body
    expect(counted.totals).toMatchObject({ conversations: 1, messages: 2, agent_replies: 1 })
  }, 150_000)

  test('with webhooks: true the call’s call.completed and call.analysed are sent, still unbilled', async () => {
    const run = await runToEnd({ target: 'draft', webhooks: true })
    const callId = run.results[0].call.id
    await until('call.analysed delivered', async () => (events('call.analysed').some((r) => r.json.data.id === callId) ? true : undefined), WAIT_MS)
    expect(events('call.completed').map((r) => r.json.data.id)).toEqual([callId])
    const ledger = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    // The test chat's reply of the first test is the only record.
    expect((await ledger.find({ workspaceId: dev.id })).map((r: any) => r.kind)).toEqual(['reply'])
    expect((await api('GET', `/agents/${agent}/analytics?days=1`)).body.totals.conversations).toBe(1)
  }, 150_000)
})
