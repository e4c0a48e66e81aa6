/**
 * Only the published snapshot talks to people, on every channel (docs/spec.md Agent publication: "an
 * agent starts in draft and cannot be talked to by users until first published"; Versioning rule
 * 2). A never-published agent keeps what customers write but answers nothing on the chat app, the bot app or email; an inbound call hears that the line is
 * not available and ends; POST /calls answers 409. An edit after publishing reaches customers only
 * once published again. The model is a local OpenAI fake, so every prompt it was sent is read back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { VOICE_LINES } from '../../src/voice/phrases'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KEY = 'sk-published-only-0123456789'
const BOT_TOKEN = '6000000077:AAHsandboxTokenForPublishedOnly_01'
let fake: FakeOpenAI
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  // Calls use the sandbox network's own speech engines; only the chat model is the fake's.
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'pro', name: 'Publishing' })
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

const messaging = () => s.server.services.of(messagingFeature)
const chats = () => fake.requests.filter((r) => r.path === '/v1/chat/completions')
const store = (name: string) => s.server.services.store.collection<any>({ name, indexes: [] })
const inbound = (body: Record<string, unknown>) => s.console('POST', `/workspaces/${dev.id}/inbound`, body)
// Every chat channel answers through one queue of agent answers: waiting on it waits for all of them.
const settle = () => messaging().inbound.settled()

/** Numbers for agent `agent`: a voice line and a chat-app number. */
async function attach(agent: string, voice: string, chat: string) {
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: voice, source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: chat, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
}

/**
 * Rings `to` from `from` on the sandbox network; once the agent has said its first line the caller
 * hangs up (after `hangupAfterMs`, moved on by the clock as well); answers the ended call's row.
 */
/** Rings `to` from `from`; once the agent's first line (`opening`, written as it is heard) is whole, the callee may hang up. */
async function inboundCall(from: string, to: string, lines: string[], opening: string, hangupAfterMs = 30_000) {
  const rang = await s.console('POST', '/sandbox/calls', { from, to, lines, hangupAfterMs })
  expect(rang.status).toBe(201)
  const tries = await store('call_tries')
  const row = async () => (await tries.find({ direction: 'inbound', phone: from }))[0]
  await until('the agent spoke', row, (r) => r?.transcript?.[0]?.text === opening, 20_000)
  await s.console('POST', '/clock/advance', { ms: hangupAfterMs })
  return until('the inbound call ended', row, (r) => r?.status === 'completed' && r?.media === 'done', 20_000)
}

describe('an agent never published', () => {
  let agent: string
  beforeAll(async () => {
    const made = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Quiet', model: 'gpt-4o-mini', voice: { answersCalls: true } } })
    agent = made.body.id
    await attach(agent, '+14155550800', '+14155550801')
    expect((await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: BOT_TOKEN })).status).toBe(200)
  })

  test('keeps what customers write on the chat app, the bot app and email, answers none of it', async () => {
    const before = chats().length
    const chat = await inbound({ channel: 'chatapp', from: '+14155550811', to: '+14155550801', text: 'Are you open today?' })
    const bot = await inbound({ channel: 'botapp', from: '5151', to: '6000000077', text: 'Hello bot' })
    const mail = await inbound({ channel: 'email', from: 'quiet@example.com', to: agent, text: 'Hello by email' })
    for (const r of [chat, bot, mail]) expect(r.status).toBe(201)
    await settle()
    expect(chats().length).toBe(before)
    expect(messaging().sandbox.sent.filter((m) => m.to === '+14155550811' || m.to === '5151')).toEqual([])
    expect((await s.console('GET', '/outbox?limit=100')).body.items.filter((m: any) => m.to === 'quiet@example.com')).toEqual([])
    const messages = await store('messages')
    for (const r of [chat, bot, mail]) {
      const kept = await messages.find({ conversationId: r.body.conversationId })
      expect(kept.map((m: any) => m.author)).toEqual(['customer'])
    }
  })

  test('POST /calls answers 409: the agent is not published', async () => {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550812' })).status).toBe(201)
    const r = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550812', purpose: 'Hello', agent } })
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('not published')
  })

  test('an inbound call hears that the line is not available, and ends; nothing is analysed', async () => {
    const before = chats().length
    const row = await inboundCall('+14155550813', '+14155550800', ['Hello, can you help me?'], VOICE_LINES.unavailable)
    expect(row.transcript.filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)).toEqual([VOICE_LINES.unavailable])
    expect(row).toMatchObject({ hangup: 'answered', summary: null, fields: {} })
    expect(row.error).toContain('not published')
    expect(chats().length).toBe(before)
    // The caller reached out: a contact now, as on the chat app.
    expect(await (await store('contacts')).findOne({ workspaceId: dev.id, phone: '+14155550813' })).not.toBeNull()
  })
})

describe('an agent edited after publishing', () => {
  let agent: string
  const PUBLISHED = 'PUBLISHED-INSTRUCTIONS: answer as version one.'
  const DRAFT = 'DRAFT-INSTRUCTIONS: answer as version two.'
  beforeAll(async () => {
    agent = (await s.agent(dev.key, { name: 'Edited', model: 'gpt-4o-mini', instructions: PUBLISHED, greeting: 'Hello from the published greeting.', voice: { answersCalls: true } })).id
    await attach(agent, '+14155550820', '+14155550821')
    const edit = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { instructions: DRAFT, greeting: 'Hello from the draft greeting.' } })
    expect(edit.status).toBe(200)
  })

  const systemPromptOfReplyTo = async (from: string, text: string) => {
    const before = chats().length
    fake.reply({ kind: 'stream', text: ['Sure.'] })
    expect((await inbound({ channel: 'chatapp', from, to: '+14155550821', text })).status).toBe(201)
    await settle()
    const sent = chats().slice(before)
    expect(sent).toHaveLength(1)
    return sent[0].body.messages[0].content as string
  }

  test('customers meet the published version until the edit is published', async () => {
    const first = await systemPromptOfReplyTo('+14155550831', 'Hi there')
    expect(first).toContain(PUBLISHED)
    expect(first).not.toContain(DRAFT)
    const call = await inboundCall('+14155550832', '+14155550820', [], 'Hello from the published greeting.', 3_000)
    expect(call.transcript[0]).toMatchObject({ speaker: 'agent', text: 'Hello from the published greeting.' })

    await s.publish(dev.key, agent)
    const second = await systemPromptOfReplyTo('+14155550833', 'Hi again')
    expect(second).toContain(DRAFT)
  })

  test('unpublished, it falls silent again', async () => {
    const res = await fetch(`${s.url}/agents/${agent}/unpublish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}` } })
    expect(res.status).toBe(200)
    const before = chats().length
    expect((await inbound({ channel: 'chatapp', from: '+14155550834', to: '+14155550821', text: 'Anyone?' })).status).toBe(201)
    await settle()
    expect(chats().length).toBe(before)
    expect(messaging().sandbox.sent.filter((m) => m.to === '+14155550834')).toEqual([])
  })
})
