/**
 * SPEC's catch-up recipe after a missed `message.received` delivery, followed literally by a
 * developer's client: from the last handled `receivedAt` minus five minutes, list conversations with
 * `since`, read each one's messages with the same `since`, skip ids already handled. It must find
 * every customer message that arrived since, on every channel, including WhatsApp messages that
 * Meta delivers out of order (a newer one first, an older one minutes later): the lists are keyed by
 * when we received a message, not by the platform's own timestamp.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startWhatsAppFake, type WhatsAppFake, whatsAppEnv, whatsAppNotification } from '../fakes/whatsapp'
import { startTestServer, type TestServer } from '../support/server'

const TOKEN = 'EAAGcatchuptoken123456'
const SECRET = 'catch-up-app-secret'
const PHONE_ID = '306540352242922'
const OURS = '+14155550480'
let fake: WhatsAppFake
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  fake = startWhatsAppFake(TOKEN)
  s = await startTestServer(whatsAppEnv(fake, { token: TOKEN, appSecret: SECRET, verifyToken: 'verify', phoneNumberIds: { [OURS]: PHONE_ID } }))
  dev = await s.developer({ plan: 'scale', name: 'Catch-up' })
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Catch-up agent' } })).body.id
  // External agents on: the developer answers, so every message is one it must not miss.
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: OURS, source: 'rented', channel: 'chatapp', agent, externalAgents: true })).status).toBe(201)
})
afterAll(async () => {
  await s?.stop()
  fake?.stop()
})

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const whatsapp = async (from: string, id: string, sentAtSeconds: number, text: string) => {
  const note = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: OURS.slice(1), phone_number_id: PHONE_ID },
    contacts: [{ profile: { name: 'Customer' }, wa_id: from }],
    messages: [{ from, id, timestamp: String(sentAtSeconds), type: 'text', text: { body: text } }],
  })
  const r = await fetch(`${s.url}/messaging/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': note.signature }, body: note.raw })
  expect(r.status).toBe(200)
}

/** Every page of a v1 list. */
async function all(path: string): Promise<any[]> {
  const items: any[] = []
  for (let cursor: string | null = null; ; ) {
    const sep = path.includes('?') ? '&' : '?'
    const page: any = (await s.api('GET', `${path}${cursor ? `${sep}cursor=${cursor}` : ''}`, { key: dev.key })).body
    items.push(...page.items)
    if (!page.nextCursor) return items
    cursor = page.nextCursor
  }
}

test('the recipe finds every customer message since the last handled one, out-of-order WhatsApp deliveries included', async () => {
  // Handled by the developer: the first message, seen through its event.
  const first = (await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550481', text: 'first, handled' })).body
  const handled = new Set<string>([first.messageId])
  const platformNow = Math.floor(Date.parse((await s.console('GET', '/clock')).body.now) / 1000)

  // Then the developer's endpoint is down while more arrive over the next hour, on three channels.
  await advance(60_000)
  // Meta delivers a customer's newer message first …
  await whatsapp('14155550482', 'wamid.NEWER', platformNow + 60, 'sent second, delivered first')
  await advance(10 * 60_000)
  // … and, ten minutes later, one the phone sent twenty minutes before the handled message (it was
  // offline), stamped with that send time: by the platform's clock it is older than the recipe's
  // `since`, so only lists keyed by our receipt find it.
  await whatsapp('14155550482', 'wamid.OLDER', platformNow - 20 * 60, 'sent first, delivered late')
  await advance(5 * 60_000)
  await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550481', text: 'a follow-up in the handled thread' })
  await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'email', from: 'reader@example.com', text: 'a question by email' })
  await advance(30 * 60_000)
  await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550483', text: 'a new customer' })

  const since = new Date(Date.parse(first.receivedAt) - 5 * 60_000).toISOString()
  const found: string[] = []
  for (const conversation of await all(`/conversations?limit=2&since=${encodeURIComponent(since)}`)) {
    for (const message of await all(`/conversations/${conversation.id}/messages?limit=2&since=${encodeURIComponent(since)}`)) {
      if (message.author !== 'customer' || handled.has(message.id)) continue
      handled.add(message.id)
      found.push(message.parts[0].text)
    }
  }
  expect(found.sort()).toEqual(['a follow-up in the handled thread', 'a new customer', 'a question by email', 'sent first, delivered late', 'sent second, delivered first'].sort())
})
