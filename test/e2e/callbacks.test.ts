/**
 * The agent's schedule_callback tool books a real scheduled call: a customer asks on the chat app
 * to be called back, the model (a local OpenAI fake speaking the real wire format) calls the tool,
 * and a `sch_` call waits for that time in the workspace's time zone, then rings. A refusal (no
 * time of day, opted out) books nothing and tells the model why; deleting a customer workspace
 * stops its callbacks.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KEY = 'sk-callbacks-test-0123456789'
const ZONE = 'America/New_York'
const MIN = 60_000
let fake: FakeOpenAI
let s: TestServer

beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  // Calls speak with the sandbox network's own speech engines; only the chat model is the fake's.
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const now = async () => Date.parse((await s.console('GET', '/clock')).body.now)
const toolCall = (when: string) => ({ kind: 'stream' as const, toolCalls: [{ id: 'cb_1', name: 'schedule_callback', args: [JSON.stringify({ when, note: 'the delivery date' })] }] })

/** A phone-and-chat agent with scheduleCallbacks, published, in workspace `ws` (a developer's or a customer's). */
async function bookingAgent(key: string, ws: string, voiceNumber: string, chatNumber: string, workspace?: string) {
  const agent = await s.agent(key, { name: 'Booker', model: 'gpt-4o-mini', scheduleCallbacks: true, voice: { answersCalls: true } }, workspace)
  expect((await s.console('POST', `/workspaces/${ws}/phone-numbers`, { number: voiceNumber, source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${ws}/phone-numbers`, { number: chatNumber, source: 'rented', channel: 'chatapp', agent: agent.id })).status).toBe(201)
  return agent.id as string
}

/** The customer writes; the model calls schedule_callback, then answers. Returns what the tool answered the model. */
async function askForCallback(ws: string, from: string, to: string, when: string): Promise<any> {
  const before = fake.requests.length
  fake.reply(toolCall(when), { kind: 'stream', text: ['Done.'] })
  expect((await s.console('POST', `/workspaces/${ws}/inbound`, { channel: 'chatapp', from, to, text: `Please call me back ${when}` })).status).toBe(201)
  const chats = async () => fake.requests.slice(before).filter((r) => r.path === '/v1/chat/completions')
  const second = await until('the model saw the tool result', chats, (r) => r.length >= 2)
  return JSON.parse(second[1].body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'cb_1').content)
}

const local = (iso: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso))
const localDay = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms))

describe('schedule_callback', () => {
  let dev: { id: string; key: string }
  beforeAll(async () => {
    dev = await s.developer({ plan: 'pro', name: 'Callbacks', timezone: ZONE })
    await bookingAgent(dev.key, dev.id, '+14155550700', '+14155550701')
  })

  test('books a scheduled call at the time asked, in the workspace time zone, that rings then', async () => {
    await s.console('PUT', '/sandbox/phones/%2B14155550711', { pickup: 'answer', ringMs: 0, hangupAfterMs: 5_000 })
    const started = await now()
    const booked = await askForCallback(dev.id, '+14155550711', '+14155550701', 'tomorrow at 3pm')
    expect(booked).toMatchObject({ scheduled: true })
    expect(booked.callId).toStartWith('sch_')
    const call = (await s.api('GET', `/calls/${booked.callId}`, { key: dev.key })).body
    expect(call).toMatchObject({ status: 'scheduled', phone: '+14155550711', direction: 'outbound', metadata: { callbackFor: expect.stringMatching(/^conv_/) } })
    // 15:00 on the next local day in New York, whatever the host's zone.
    const tomorrow = localDay(started + 24 * 60 * MIN)
    expect(local(call.scheduledFor)).toBe(`${tomorrow}, 15:00`)
    expect(booked.at).toBe(call.scheduledFor)
    expect(booked.localTime).toBe(`${tomorrow} 15:00 (${ZONE})`)
    // Not listed while it waits; it rings at its time.
    expect((await s.api('GET', '/calls?limit=100', { key: dev.key })).body.items.map((c: any) => c.id)).not.toContain(booked.callId)
    await advance(Date.parse(call.scheduledFor) - (await now()) + 1_000)
    await until(
      'rang',
      () => s.api('GET', `/calls/${booked.callId}`, { key: dev.key }),
      (r) => ['ringing', 'connected', 'completed'].includes(r.body.status),
    )
  })

  test('a day with no time of day books nothing and tells the model to ask', async () => {
    const booked = await askForCallback(dev.id, '+14155550712', '+14155550701', 'tomorrow')
    expect(booked).toEqual({ scheduled: false, error: expect.stringContaining('no time of day') })
    const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    expect(await tries.count({ workspaceId: dev.id, phone: '+14155550712' })).toBe(0)
  })

  test('a person who opted out is not booked (the call rules apply)', async () => {
    const contact = await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550713', optedOut: true })
    expect(contact.status).toBe(201)
    const booked = await askForCallback(dev.id, '+14155550713', '+14155550701', 'tomorrow at 10am')
    expect(booked).toEqual({ scheduled: false, error: expect.stringContaining('opted out') })
  })
})

test('deleting a customer workspace stops its callbacks', async () => {
  const dev = await s.developer({ plan: 'pro', name: 'Reseller' })
  const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Shop', timezone: 'Asia/Kolkata' } })).body.id
  await bookingAgent(dev.key, customer, '+14155550720', '+14155550721', customer)
  const booked = await askForCallback(customer, '+14155550722', '+14155550721', 'tomorrow at 11am')
  expect(booked).toMatchObject({ scheduled: true })
  expect(local(booked.at)).toBeString()
  // The customer gives its numbers back, then is deleted: the waiting callback is cancelled, never rings.
  for (const n of ['+14155550720', '+14155550721']) expect((await s.console('DELETE', `/workspaces/${customer}/phone-numbers/${encodeURIComponent(n)}`)).status).toBe(204)
  expect((await s.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBeLessThan(300)
  const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
  const row = await until(
    'cancelled',
    async () => (await tries.find({ callId: booked.callId }))[0],
    (r) => r?.status === 'cancelled',
  )
  expect(row.hangup).toBe('cancelled')
  await advance(2 * 24 * 60 * MIN)
  expect((await tries.find({ callId: booked.callId }))[0].status).toBe('cancelled')
})
