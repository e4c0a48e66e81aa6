/**
 * Inbound chat-app messages end to end on the sandbox platform (issue 12, first part): the agent
 * answers from knowledge on the platform with receipts; one conversation per customer and number;
 * external agents get `message.received` instead; STOP opts out; a teammate's takeover silences
 * the agent; the console's refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale', name: 'Chat' })
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bean There' } })).body.id
  expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' } })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550400', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
})
afterAll(() => s?.stop())

const platform = () => s.server.services.of(messagingFeature).platform
const inbound = (body: Record<string, unknown>, ws = dev.id) => s.console('POST', `/workspaces/${ws}/inbound`, { channel: 'chatapp', ...body })
const events = async (type: string) => (await s.server.services.store.collection<any>({ name: 'events', indexes: [] })).find({ type })

describe('an inbound message', () => {
  test('is answered by the agent on the platform, from knowledge; receipts mark the reply delivered', async () => {
    const r = await inbound({ from: '+1 (415) 555-0401', to: '+14155550400', text: 'What time do you open on Sunday?' })
    expect(r.status).toBe(201)
    expect(r.body.conversationId).toStartWith('conv_')
    expect(r.body.messageId).toStartWith('msg_')
    const sent = await until('the reply sent', async () => platform().sent.filter((m) => m.to === '+14155550401'), (m) => m.length === 1)
    expect(sent[0]).toMatchObject({ from: '+14155550400', to: '+14155550401', content: { type: 'text' } })
    expect((sent[0]!.content as { text: string }).text).toContain('8 am to 2 pm')
    const conversation = (await s.api('GET', '/conversations?channel=chatapp', { key: dev.key })).body.items.find((c: any) => c.id === r.body.conversationId)
    expect(conversation).toMatchObject({ channel: 'chatapp', customer: { phone: '+14155550401' }, status: 'active' })
    expect(conversation.lastInboundAt).toBe(r.body.receivedAt)
    // The person became a contact.
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    expect(await contacts.findOne({ workspaceId: dev.id, phone: '+14155550401' })).not.toBeNull()
    const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
    const reply = await until('delivered', async () => (await messages.find({ conversationId: r.body.conversationId, author: 'agent' }))[0], (m) => m?.delivery?.status === 'delivered')
    expect(reply.delivery.platformMessageId).toBe(sent[0]!.platformMessageId)

    // The same customer on the same number: the same conversation.
    const again = await inbound({ from: '+14155550401', text: 'Thanks!' })
    expect(again.body.conversationId).toBe(r.body.conversationId)
  })

  test('external agents on: message.received goes out and the agent stays quiet', async () => {
    const other = await s.developer({ plan: 'scale', name: 'External' })
    const a = (await s.api('POST', '/agents', { key: other.key, body: { name: 'Ext' } })).body.id
    expect((await s.console('POST', `/workspaces/${other.id}/phone-numbers`, { number: '+14155550410', source: 'rented', channel: 'chatapp', agent: a, externalAgents: true })).status).toBe(201)
    const r = await inbound({ from: '+14155550411', text: 'Hello?' }, other.id)
    expect(r.status).toBe(201)
    const published = await until('message.received', () => events('message.received'), (e) => e.some((x: any) => x.data.messageId === r.body.messageId))
    const event = published.find((x: any) => x.data.messageId === r.body.messageId)!
    expect(event.data).toMatchObject({ conversationId: r.body.conversationId, receivedAt: r.body.receivedAt, channel: 'chatapp', customer: { phone: '+14155550411' }, parts: [{ type: 'text', text: 'Hello?' }] })
    await Bun.sleep(100)
    expect(platform().sent.filter((m) => m.to === '+14155550411')).toEqual([])
  })

  test('STOP records the opt-out; nothing is sent back', async () => {
    const r = await inbound({ from: '+14155550402', text: 'STOP' })
    expect(r.status).toBe(201)
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    expect((await contacts.findOne({ workspaceId: dev.id, phone: '+14155550402' })).optedOut).toBe(true)
    await s.server.services.of(messagingFeature).inbound.settled()
    expect(platform().sent.filter((m) => m.to === '+14155550402')).toEqual([])
  })

  test('a teammate who took the conversation over silences the agent', async () => {
    const first = await inbound({ from: '+14155550403', text: 'Hi there' })
    await until('first answer', async () => platform().sent.filter((m) => m.to === '+14155550403'), (m) => m.length === 1)
    expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${first.body.conversationId}/takeover`)).status).toBe(200)
    await inbound({ from: '+14155550403', text: 'Are you still there?' })
    await s.server.services.of(messagingFeature).inbound.settled()
    expect(platform().sent.filter((m) => m.to === '+14155550403')).toHaveLength(1)
  })

  test('refusals name the field', async () => {
    expect((await inbound({ from: 'call me', text: 'hi' })).body.error).toContain('from')
    expect((await inbound({ from: '+14155550404', to: '+14155559999', text: 'hi' })).status).toBe(404)
    expect((await inbound({ from: '+14155550404', text: '' })).status).toBe(400)
    expect((await inbound({ channel: 'fax', from: '+14155550404', text: 'hi' })).status).toBe(400)
    const voice = await s.developer({ plan: 'scale', name: 'Voice only' })
    const a = (await s.api('POST', '/agents', { key: voice.key, body: { name: 'V' } })).body.id
    expect((await s.console('POST', `/workspaces/${voice.id}/phone-numbers`, { number: '+14155550420', source: 'rented', agent: a })).status).toBe(201)
    const r = await inbound({ from: '+14155550404', to: '+14155550420', text: 'hi' }, voice.id)
    expect(r.status).toBe(400)
    expect(r.body.error).toContain('voice number')
  })
})
