/**
 * A write and the event that reports it commit together, across kill -9. The probe that found the
 * gap: 100 website messages answered, the process killed right after the last answer — every reply
 * was stored but one had no `chat.message.completed` (99 deliveries for 100 replies), because the
 * reply and its event were two writes. Now the event is recorded in the reply's commit
 * (EventBus.publishWith), and the named point `event.recorded:chat.message.completed` sits between
 * that commit and the event's delivery: the real service in a child process dies there on the
 * 100th reply, restarts on the same DATA_DIR, and delivers that reply's event, once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server, Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { readEvents } from '../support/sse'
import { until } from '../support/until'

const TOKEN = 'event-outbox-crash-console-token-0123'
const REPLIES = 100
const SERVICE_ENV = { SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }

interface Hit {
  delivery: string
  eventId: string
  messageId: string
}

let receiver: Server<unknown>
const hits: Hit[] = []
let dataDir = ''
let child: Subprocess | null = null

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-outbox-crash-'))
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { id: string; data: { messageId: string } }
      hits.push({ delivery: req.headers.get('x-service-delivery-id') ?? '', eventId: body.id, messageId: body.data.messageId })
      return new Response('{}')
    },
  })
})

afterAll(() => {
  child?.kill('SIGKILL')
  receiver?.stop(true)
  rmSync(dataDir, { recursive: true, force: true })
})

test(`killed between the ${REPLIES}th website reply's commit and its event's delivery: restarted, every reply has its event, each delivered once`, async () => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const call = childClient(port)
  child = await startChildService(port, {
    ...SERVICE_ENV,
    DATA_DIR: dataDir,
    SERVICE_CRASH_AT: `event.recorded:chat.message.completed@${REPLIES}`,
    // A hundred visitors from this one address in a few seconds: past the per-address session limit.
    VISITOR_SESSIONS_PER_MINUTE: '0',
  })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Outbox', plan: 'scale' })).body
  const created = (await call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body
  expect((await call('POST', `/agents/${created.id}/publish`, dev.key, {})).status).toBe(200)
  const agentNumber = (await call('GET', `/agents/${created.id}/status`, dev.key)).body.agent_id
  const endpoint = await call('POST', '/webhooks/endpoints', dev.key, { url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ['chat.message.completed'], agent_id: agentNumber })
  expect(endpoint.status).toBe(200)

  const web = (path: string, body: unknown) =>
    fetch(`${base}/api/v1/web/${created.webKey}/${path}`, { method: 'POST', headers: { origin: 'http://shop.example', 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // One visitor per message, so no visitor's pace limit is reached.
  const say = async () => {
    const session = ((await (await web('sessions', {})).json()) as { session: string }).session
    const events = await readEvents(await web('messages', { session, message: 'Hello, are you open on Sundays?' }))
    return { conversationId: events.find((e) => e.event === 'accepted')?.data.conversationId as string, reply: events.find((e) => e.event === 'reply')?.data.messageId as string | undefined }
  }
  const conversations: string[] = []
  for (let i = 1; i < REPLIES; i++) {
    const answered = await say()
    expect(answered.reply).toStartWith('msg_')
    conversations.push(answered.conversationId)
  }
  // The first 99 are delivered and recorded before the last message, so the kill cuts only the last.
  await until('99 deliveries', () => new Set(hits.map((h) => h.messageId)).size === REPLIES - 1, { withinMs: 15_000, everyMs: 20 })
  await until(
    '99 deliveries recorded',
    async () => {
      const list = (await call('GET', `/webhooks/endpoints/${endpoint.body.endpoint.id}/deliveries?limit=100`, dev.key)).body.deliveries as { status: string }[]
      return list.length === REPLIES - 1 && list.every((d) => d.status === 'success')
    },
    { withinMs: 15_000, everyMs: 20 },
  )

  const last = await say().catch(() => null)
  await child.exited
  expect(child.signalCode).toBe('SIGKILL')
  // The stream was cut before the reply event reached the visitor, and the event went nowhere.
  expect(last?.reply).toBeUndefined()
  expect(hits).toHaveLength(REPLIES - 1)

  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir })
  // Every conversation, the last included, holds its agent reply.
  const listed = (await call('GET', '/api/v1/conversations?channel=web&limit=100', dev.key)).body.items as { id: string }[]
  expect(listed).toHaveLength(REPLIES)
  const replies: string[] = []
  for (const c of listed) {
    const messages = (await call('GET', `/api/v1/conversations/${c.id}/messages?limit=10`, dev.key)).body.items as { id: string; author: string }[]
    const agentReplies = messages.filter((m) => m.author === 'agent')
    expect(agentReplies).toHaveLength(1)
    replies.push(agentReplies[0]!.id)
  }
  const lastConversation = listed.find((c) => !conversations.includes(c.id))!
  expect(lastConversation).toBeDefined()

  await until('the last reply delivered', () => hits.length === REPLIES, { withinMs: 15_000, everyMs: 20 })
  // Settle: a second dispatch or delivery would show up within this.
  await Bun.sleep(500)
  child.kill('SIGKILL')
  await child.exited
  child = null

  expect(hits).toHaveLength(REPLIES)
  expect(new Set(hits.map((h) => h.messageId))).toEqual(new Set(replies))
  expect(new Set(hits.map((h) => h.eventId)).size).toBe(REPLIES)
  expect(new Set(hits.map((h) => h.delivery)).size).toBe(REPLIES)
}, 120_000)
