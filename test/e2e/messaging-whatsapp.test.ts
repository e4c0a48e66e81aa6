/**
 * The chat app as the WhatsApp Cloud API: Meta's verification handshake, a signed inbound message
 * answered by the agent through Graph's `/messages`, a `delivered` status moving the reply, a
 * bad signature refused, and a developer reply with a template in WhatsApp's wire format.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startWhatsAppFake, type WhatsAppFake, whatsAppEnv, whatsAppNotification } from '../fakes/whatsapp'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const TOKEN = 'EAAGfaketoken1234567890'
const SECRET = 'app-secret-for-tests'
const VERIFY = 'verify-me-please'
let fake: WhatsAppFake
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  fake = startWhatsAppFake(TOKEN)
  s = await startTestServer(whatsAppEnv(fake, { token: TOKEN, appSecret: SECRET, verifyToken: VERIFY, phoneNumberIds: { '+14155550380': '106540352242922' } }))
  dev = await s.developer({ plan: 'scale', name: 'WA' })
  const agent = (await s.agent(dev.key, { name: 'WA agent' })).id
  expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' } })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550380', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
})
afterAll(async () => {
  await s?.stop()
  fake?.stop()
})

const hook = (raw: string, signature: string) =>
  fetch(`${s.url}/messaging/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: raw })

test("Meta's verification handshake echoes the challenge only for our verify token", async () => {
  const ok = await fetch(`${s.url}/messaging/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=1158201444`)
  expect(ok.status).toBe(200)
  expect(await ok.text()).toBe('1158201444')
  expect((await fetch(`${s.url}/messaging/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`)).status).toBe(403)
})

test('a signed inbound message is answered through Graph; its delivered status moves the reply; a bad signature is refused', async () => {
  const inbound = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: '14155550380', phone_number_id: '106540352242922' },
    contacts: [{ profile: { name: 'Priya' }, wa_id: '14155550381' }],
    messages: [{ from: '14155550381', id: 'wamid.IN1', timestamp: '1732400000', type: 'text', text: { body: 'What time do you open on Sunday?' } }],
  })
  expect((await hook(inbound.raw, `sha256=${'0'.repeat(64)}`)).status).toBe(403)
  expect((await hook(inbound.raw, inbound.signature)).status).toBe(200)
  const sent = await until(
    'the answer sent through Graph',
    async () => fake.sent,
    (x) => x.length === 1,
  )
  expect(sent[0]).toMatchObject({ version: 'v21.0', phoneNumberId: '106540352242922', body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: '14155550381', type: 'text' } })
  expect(sent[0]!.body.text.body).toContain('8 am to 2 pm')

  const status = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: '14155550380', phone_number_id: '106540352242922' },
    statuses: [{ id: 'wamid.FAKE1', status: 'delivered', timestamp: '1732400005', recipient_id: '14155550381' }],
  })
  expect((await hook(status.raw, status.signature)).status).toBe(200)
  const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
  const reply = await until(
    'delivered',
    async () => (await messages.find({ author: 'agent', workspaceId: dev.id }))[0],
    (m) => m?.delivery?.status === 'delivered',
  )
  expect(reply.delivery.platformMessageId).toBe('wamid.FAKE1')
})

test("a template reply goes out in WhatsApp's template format; a Graph refusal is a 502", async () => {
  const ext = await s.developer({ plan: 'scale', name: 'WA ext' })
  const agent = (await s.agent(ext.key, { name: 'Ext' })).id
  expect((await s.console('POST', `/workspaces/${ext.id}/phone-numbers`, { number: '+14155550390', source: 'rented', channel: 'chatapp', agent, externalAgents: true })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${ext.id}/templates`, { name: 'order_update', language: 'en_US', category: 'utility', body: 'Order {{1}} ships {{2}}.' })).status).toBe(201)
  const note = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: '14155550390', phone_number_id: '209876543210987' },
    messages: [{ from: '14155550391', id: 'wamid.IN2', timestamp: '1732400100', type: 'text', text: { body: 'Where is my order?' } }],
  })
  expect((await hook(note.raw, note.signature)).status).toBe(200)
  const conv = await until(
    'the conversation',
    async () => (await s.api('GET', '/conversations?channel=chatapp', { key: ext.key })).body.items,
    (items) => items.length === 1,
  )
  const r = await s.api('POST', `/conversations/${conv[0].id}/reply`, { key: ext.key, body: { template: { name: 'order_update', variables: ['A-9', 'today'] } } })
  expect(r.status).toBe(200)
  // The phone-number id came from the webhook (not configured for this number).
  expect(fake.sent.at(-1)).toMatchObject({
    phoneNumberId: '209876543210987',
    body: {
      type: 'template',
      to: '14155550391',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'A-9' },
              { type: 'text', text: 'today' },
            ],
          },
        ],
      },
    },
  })
  fake.refuse.add('14155550391')
  const refused = await s.api('POST', `/conversations/${conv[0].id}/reply`, { key: ext.key, body: { text: 'hello' } })
  expect(refused.status).toBe(502)
  expect(refused.body.error).toContain('Message Undeliverable')
})

test('a photo the customer sends is fetched once and comes back as our link, valid eight hours', async () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4])
  fake.media.set('media123', { bytes: png, mime: 'image/png' })
  const note = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: '14155550380', phone_number_id: '106540352242922' },
    messages: [{ from: '14155550382', id: 'wamid.IMG1', timestamp: '1732400200', type: 'image', image: { id: 'media123', mime_type: 'image/png', caption: 'My receipt' } }],
  })
  expect((await hook(note.raw, note.signature)).status).toBe(200)
  const conv = await until(
    'the conversation',
    async () => (await s.api('GET', '/conversations?channel=chatapp', { key: dev.key })).body.items.find((c: any) => c.customer.phone === '+14155550382'),
    (c) => !!c,
  )
  const messages = (await s.api('GET', `/conversations/${conv.id}/messages`, { key: dev.key })).body.items
  const photo = messages.find((m: any) => m.author === 'customer')
  expect(photo.parts).toEqual([{ type: 'image', url: expect.stringMatching(/\/files\/file_\w+\/\d+\/[\w-]+$/), alt: 'My receipt' }])
  const link = photo.parts[0].url.replace(/^https?:\/\/[^/]+/, s.url)
  const got = await fetch(link)
  expect(got.status).toBe(200)
  expect(got.headers.get('content-type')).toBe('image/png')
  expect(new Uint8Array(await got.arrayBuffer())).toEqual(png)
  expect((await fetch(link.replace(/\/[\w-]+$/, '/forged'))).status).toBe(404)
  await s.console('POST', '/clock/advance', { ms: 8 * 60 * 60 * 1000 + 1 })
  expect((await fetch(link)).status).toBe(404)
  // Read again: a fresh link, valid from now.
  const again = (await s.api('GET', `/conversations/${conv.id}/messages`, { key: dev.key })).body.items.find((m: any) => m.author === 'customer')
  expect((await fetch(again.parts[0].url.replace(/^https?:\/\/[^/]+/, s.url))).status).toBe(200)
})
