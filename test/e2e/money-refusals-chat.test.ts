/**
 * A workspace whose wallet cannot pay for a reply, on the live text channels: the customer's
 * message is kept and not answered; a website visitor is told the chat is not available right now
 * (never that a person has it); the conversation goes to the team (escalated, the reason naming the
 * money, in `conversation.escalated`); a warn line says why. A top-up resumes the replies. A
 * sequence step it cannot pay for is skipped with the reason.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { RecordedEvent } from '../../src/events/bus'
import { messagingFeature } from '../../src/features/messaging'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'
import { readEvents } from '../support/sse'
import { until } from '../support/until'

const { logger, lines } = capturedLogger('warn')
let s: TestServer
const events: RecordedEvent[] = []

beforeAll(async () => {
  s = await startTestServer({}, undefined, logger)
  s.server.services.bus.subscribe((e) => void events.push(e))
})
afterAll(() => s?.stop())

/** A Pay-as-you-go workspace whose numbers' rent (4 × 1.50 USD) is more than its 5 USD credit: nothing available. */
async function broke(name: string, prefix: string, channel: 'voice' | 'chatapp' = 'voice') {
  const dev = await s.developer({ plan: 'payg', name })
  const agent = await s.agent(dev.key, { name })
  for (let i = 0; i < 4; i++)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: `${prefix}${i}`, source: 'rented', channel, agent: i === 0 ? agent.id : null })).status).toBe(201)
  expect((await s.api('GET', '/usage', { key: dev.key })).body.wallet.availableMicro).toBeLessThan(0)
  return { dev, agent }
}

const escalatedFor = (conversationId: string) => events.filter((e) => e.type === 'conversation.escalated' && (e.data as any).conversationId === conversationId)
const refusalLines = (conversation: string) => lines.filter((l) => l.conversation === conversation && l.msg === 'a customer message was not answered: the account cannot pay for replies')

test('a website visitor is told the chat is not available right now; the team gets the conversation with the reason', async () => {
  const { dev, agent } = await broke('Broke web', '+1415555810')
  const key = agent.webKey as string
  const web = (path: string, body: unknown) => fetch(`${s.url}/api/v1/web/${key}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const session = ((await (await web('sessions', {})).json()) as any).session
  const res = await web('messages', { session, message: 'Are you open today?' })
  expect(res.status).toBe(200)
  const said = await readEvents(res)
  expect(said.map((e) => e.event)).toEqual(['accepted', 'unavailable'])
  expect(said[1]!.data).toEqual({ reason: 'this chat is not available right now' })
  const conversationId = said[0]!.data.conversationId

  const conversation = (await s.api('GET', '/conversations?channel=web', { key: dev.key })).body.items.find((c: any) => c.id === conversationId)
  expect(conversation.status).toBe('escalated')
  const messages = (await s.api('GET', `/conversations/${conversationId}/messages`, { key: dev.key })).body.items
  expect(messages.map((m: any) => m.author)).toEqual(['customer'])
  const escalated = escalatedFor(conversationId)
  expect(escalated).toHaveLength(1)
  expect((escalated[0]!.data as any).reason).toBe('the agent could not reply: replies are stopped: the wallet cannot pay for a reply; top up the balance')
  expect(refusalLines(conversationId)).toHaveLength(1)
  expect(refusalLines(conversationId)[0]).toMatchObject({ level: 40, workspace: dev.id, channel: 'web', reason: 'replies are stopped: the wallet cannot pay for a reply; top up the balance' })

  // A second message: told the same, no second escalation event.
  await s.console('POST', '/clock/advance', { ms: 2_000 })
  const again = await readEvents(await web('messages', { session, message: 'Hello?' }))
  expect(again.map((e) => e.event)).toEqual(['accepted', 'unavailable'])
  expect(escalatedFor(conversationId)).toHaveLength(1)

  // Topped up: the agent answers again, in the same (escalated) conversation.
  expect((await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })).status).toBe(200)
  await s.console('POST', '/clock/advance', { ms: 2_000 })
  const answered = await readEvents(await web('messages', { session, message: 'And now?' }))
  expect(answered.map((e) => e.event)).toContain('reply')
})

test('a chat-app message is not answered (nothing is sent that cannot be paid); the team gets it with the reason', async () => {
  const { dev } = await broke('Broke chat app', '+1415555820', 'chatapp')
  const platform = s.server.services.of(messagingFeature).sandbox
  const r = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155558299', to: '+14155558200', text: 'Do you deliver?' })
  expect(r.status).toBe(201)
  await s.server.services.of(messagingFeature).inbound.settled()
  expect(platform.sent.filter((m) => m.to === '+14155558299')).toEqual([])
  const conversationId = r.body.conversationId
  expect((await s.api('GET', '/conversations?channel=chatapp', { key: dev.key })).body.items.find((c: any) => c.id === conversationId).status).toBe('escalated')
  expect((escalatedFor(conversationId)[0]!.data as any).reason).toContain('the wallet cannot pay for a reply')
  expect(refusalLines(conversationId)[0]).toMatchObject({ workspace: dev.id, channel: 'chatapp' })
})

test('a sequence step the balance cannot pay for is skipped with the reason, and said in a warn line', async () => {
  const { dev, agent } = await broke('Broke sequence', '+1415555830', 'chatapp')
  expect((await s.console('POST', `/workspaces/${dev.id}/templates`, { name: 'welcome', language: 'en', category: 'utility', body: 'Welcome!' })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558399' })).status).toBe(201)
  const seq = (await s.console('POST', `/workspaces/${dev.id}/sequences`, { name: 'Onboarding', agent: agent.id, steps: [{ template: 'welcome', delayMinutes: 0 }] })).body.id
  const enrolled = await s.api('POST', `/sequences/${seq}/enrolments`, { key: dev.key, body: { to: '+14155558399' } })
  expect(enrolled.body.enrolled).toBe(true)
  await s.console('POST', '/clock/advance', { ms: 1_000 })
  const enrolments = await s.server.services.store.collection<any>({ name: 'enrolments', indexes: [] })
  const done = await until(
    'the step is decided',
    () => enrolments.get(enrolled.body.id),
    (e) => e.steps['0'] !== undefined && e.steps['0'] !== 'sending',
  )
  expect(done.steps['0']).toBe('skipped: the balance cannot pay for a utility message: -1000000 micro-units available, one costs 4000; top up the wallet')
  expect(s.server.services.of(messagingFeature).sandbox.sent.filter((m) => m.to === '+14155558399')).toEqual([])
  expect(lines.filter((l) => l.enrolment === enrolled.body.id && l.msg === 'a sequence step was not sent: the account cannot pay for it')).toHaveLength(1)
})
