/**
 * The bot app (`botapp`) end to end: on the sandbox, a bot connected through the console answers a
 * chat; on Telegram (a local Bot API), connecting checks the token with getMe and sets our webhook
 * with a secret, an update with the wrong secret is refused, the agent answers from knowledge with
 * sendMessage, a photo comes back as our own link, external agents get `message.received` and reply
 * (templates refused, a blocked chat 502), and disconnecting deletes the webhook.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { startTelegramFake, type TelegramFake, textUpdate } from '../fakes/telegram'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KNOWLEDGE = { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' }

describe('on the sandbox', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startTestServer()
  })
  afterAll(() => s?.stop())

  test('a bot connected through the console answers a chat with the agent', async () => {
    const dev = await s.developer({ plan: 'scale', name: 'Bots' })
    const agent = (await s.agent(dev.key, { name: 'Bean Bot' })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: KNOWLEDGE })).status).toBe(201)
    const bad = await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: 'not-a-token' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toStartWith('token:')
    expect((await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent: 'ag_nope', token: '6000000001:AAHsandboxTokenForTests_0123456789' })).status).toBe(404)
    const none = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'botapp', from: '4242', text: 'hi' })
    expect(none.status).toBe(400)
    expect(none.body.error).toContain('no bot')

    const connected = await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: '6000000001:AAHsandboxTokenForTests_0123456789' })
    expect(connected.status).toBe(200)
    expect(connected.body).toMatchObject({ bot: '6000000001', agent, externalAgents: false, tokenLast4: '6789' })
    expect(JSON.stringify((await s.console('GET', `/workspaces/${dev.id}/botapp`)).body)).not.toContain('AAHsandbox')

    expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'botapp', from: 'asha', text: 'hi' })).status).toBe(400)
    const r = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'botapp', from: '4242', text: 'What time do you open on Sunday?' })
    expect(r.status).toBe(201)
    const sandbox = s.server.services.of(messagingFeature).sandbox
    const sent = await until(
      'the answer',
      async () => sandbox.sent.filter((m) => m.to === '4242'),
      (m) => m.length === 1,
    )
    expect(sent[0]).toMatchObject({ from: '6000000001', content: { type: 'text' } })
    expect((sent[0]!.content as { text: string }).text).toContain('8 am to 2 pm')
    const conversation = (await s.api('GET', '/conversations?channel=botapp', { key: dev.key })).body.items[0]
    expect(conversation).toMatchObject({ id: r.body.conversationId, channel: 'botapp', customer: { id: null, phone: null } })
    const again = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'botapp', from: '4242', to: '6000000001', text: 'Thanks' })
    expect(again.body.conversationId).toBe(r.body.conversationId)
  })
})

describe('on Telegram', () => {
  const TOKEN = '7100000001:AAHtelegramFakeToken_abcdefghijklmno'
  const BOT = 7100000001
  let fake: TelegramFake
  let s: TestServer
  let dev: { id: string; key: string }
  let agent: string

  beforeAll(async () => {
    fake = startTelegramFake()
    fake.bots.set(TOKEN, { id: BOT, username: 'bean_there_bot', first_name: 'Bean There' })
    s = await startTestServer({ BOTAPP_PROVIDER: 'telegram', TELEGRAM_API_URL: fake.url })
    dev = await s.developer({ plan: 'scale', name: 'Telegram' })
    agent = (await s.agent(dev.key, { name: 'Bean There' })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: KNOWLEDGE })).status).toBe(201)
  })
  afterAll(async () => {
    await s?.stop()
    fake?.stop()
  })
  // PUBLIC_BASE_URL is where Telegram would call us; the test server listens on its own port.
  const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, s.url)
  const localHook = () => fake.webhooks.set(BOT, { ...fake.webhooks.get(BOT)!, url: local(fake.webhooks.get(BOT)!.url) })

  test('a token Telegram refuses is not kept; a good one sets our webhook with a secret', async () => {
    const refused = await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: '7100000009:AAHunknownTokenToTelegram_000000000' })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toContain('Telegram refused this token')
    expect((await s.console('GET', `/workspaces/${dev.id}/botapp`)).body.data).toEqual([])
    const ok = await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: TOKEN })
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ bot: String(BOT), username: 'bean_there_bot' })
    const hook = fake.webhooks.get(BOT)!
    expect(hook.url).toMatch(new RegExp(`^https?://[^/]+/messaging/telegram/webhook/${BOT}$`))
    expect(hook.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // Another workspace cannot take the bot.
    const other = await s.developer({ plan: 'scale', name: 'Thief' })
    const theirs = (await s.agent(other.key, { name: 'Other' })).id
    expect((await s.console('PUT', `/workspaces/${other.id}/botapp`, { agent: theirs, token: TOKEN })).status).toBe(409)
    expect(fake.webhooks.get(BOT)!.secret).toBe(hook.secret)
  })

  test('an update with the wrong secret is refused; a good one is answered with sendMessage', async () => {
    localHook()
    expect((await fake.deliver(BOT, textUpdate(1, 900001, 'hello'), 'wrong')).status).toBe(403)
    expect((await fake.deliver(BOT, textUpdate(2, 900001, 'hello'), null)).status).toBe(403)
    expect((await fake.deliver(BOT, textUpdate(3, 900001, 'What time do you open on Sunday?'))).status).toBe(200)
    const sent = await until(
      'sendMessage',
      async () => fake.sent.filter((m) => m.body.chat_id === 900001),
      (m) => m.length === 1,
    )
    expect(sent[0]!.method).toBe('sendMessage')
    expect(sent[0]!.body.text).toContain('8 am to 2 pm')
    const conv = (await s.api('GET', '/conversations?channel=botapp', { key: dev.key })).body.items[0]
    const messages = (await s.api('GET', `/conversations/${conv.id}/messages`, { key: dev.key })).body.items
    expect(messages.map((m: any) => m.author).sort()).toEqual(['agent', 'customer'])
  })

  test('a photo arrives as our own link; external agents reply with text, not templates; a blocked chat is a 502', async () => {
    expect((await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: TOKEN, externalAgents: true })).body.externalAgents).toBe(true)
    localHook()
    fake.files.set('ph-2', { bytes: new Uint8Array([255, 216, 255, 224]), mime: 'image/jpeg' })
    const photo = {
      update_id: 10,
      message: {
        message_id: 10,
        date: 1732400000,
        chat: { id: 900002, type: 'private' },
        from: { id: 900002, first_name: 'Ravi' },
        caption: 'Is this your shop?',
        photo: [{ file_id: 'ph-1' }, { file_id: 'ph-2' }],
      },
    }
    expect((await fake.deliver(BOT, photo)).status).toBe(200)
    const events = await s.server.services.store.collection<any>({ name: 'events', indexes: [] })
    const received = await until(
      'message.received',
      () => events.find({ type: 'message.received', workspaceId: dev.id }),
      (e) => e.length === 1,
    )
    const data = received[0]!.data
    expect(data.channel).toBe('botapp')
    expect(data.parts[0]).toMatchObject({ type: 'image', alt: 'Is this your shop?' })
    const image = await fetch(local(data.parts[0].url))
    expect(image.status).toBe(200)
    expect([...new Uint8Array(await image.arrayBuffer())]).toEqual([255, 216, 255, 224])
    expect(fake.sent.filter((m) => m.body.chat_id === 900002)).toEqual([])

    const reply = (body: unknown) => s.api('POST', `/conversations/${data.conversationId}/reply`, { key: dev.key, body })
    expect((await reply({ text: 'Yes, that is us!' })).status).toBe(200)
    expect(fake.sent.filter((m) => m.body.chat_id === 900002).map((m) => m.body.text)).toEqual(['Yes, that is us!'])
    const template = await reply({ template: { name: 'welcome' } })
    expect(template.status).toBe(409)
    expect(template.body.error).toContain('no templates')
    fake.blocked.add(900002)
    const blocked = await reply({ text: 'Still there?' })
    expect(blocked.status).toBe(502)
    expect(blocked.body.error).toContain('blocked')
  })

  test('disconnecting deletes the webhook; its updates are refused after', async () => {
    const hook = fake.webhooks.get(BOT)!
    expect((await s.console('DELETE', `/workspaces/${dev.id}/botapp/${BOT}`)).status).toBe(200)
    expect(fake.webhooks.get(BOT)).toBeNull()
    expect(
      (await fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': hook.secret! }, body: JSON.stringify(textUpdate(20, 900001, 'hi')) }))
        .status,
    ).toBe(403)
    expect((await s.console('DELETE', `/workspaces/${dev.id}/botapp/${BOT}`)).status).toBe(404)
  })
})
