/**
 * A teammate writes to the customer from the console (`POST /console/workspaces/{ws}/conversations/{id}/messages`)
 * on the conversation's own channel: the chat app and the bot app on the sandbox platform, email
 * through the outbox and through a real SMTP server. Each message takes the conversation over, is
 * stored as the teammate's with its delivery, and (on a platform) is charged; the refusals (window
 * closed, opted out, number released, bot disconnected, voice, platform or mail server refusing)
 * change nothing. Website chats: web-chat.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { conversationsFeature } from '../../src/features/conversations'
import { messagingFeature } from '../../src/features/messaging'
import type { Filter } from '../../src/store/port'
import { type SmtpFake, startSmtp } from '../fakes/smtp'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KNOWLEDGE = { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' }

/** What a test needs of its server: the console's calls and the stored rows. */
function helpers(s: TestServer, ws: () => string) {
  const messaging = () => s.server.services.of(messagingFeature)
  const rows = async (name: string, filter: Filter) => (await s.server.services.store.collection<any>({ name, indexes: [] })).find(filter)
  return {
    messaging,
    rows,
    write: (id: string, text: string) => s.console('POST', `/workspaces/${ws()}/conversations/${id}/messages`, { text }),
    inbound: async (body: Record<string, unknown>) => {
      const r = await s.console('POST', `/workspaces/${ws()}/inbound`, body)
      expect(r.status).toBe(201)
      // The agent's own answer is sent before the teammate steps in.
      await messaging().inbound.settled()
      return r.body.conversationId as string
    },
    conversation: async (id: string) => (await s.console('GET', `/workspaces/${ws()}/conversations/${id}`)).body,
    teammateMessages: (conversationId: string) => rows('messages', { conversationId, author: 'teammate' }),
  }
}

describe('on the sandbox platform, email through the outbox', () => {
  let s: TestServer
  let dev: { id: string; key: string }
  let agent: string
  let h: ReturnType<typeof helpers>
  const sent = (to: string) => h.messaging().sandbox.sent.filter((m) => m.to === to)

  beforeAll(async () => {
    s = await startTestServer()
    dev = await s.developer({ plan: 'scale', name: 'Team' })
    agent = (await s.agent(dev.key, { name: 'Bean There' })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: KNOWLEDGE })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    h = helpers(s, () => dev.id)
  })
  afterAll(() => s?.stop())

  test('chat app: sent from our number, the conversation taken over, stored as the teammate’s, delivered and charged', async () => {
    const id = await h.inbound({ channel: 'chatapp', from: '+14155550701', text: 'What time do you open on Sunday?' })
    expect(sent('+14155550701')).toHaveLength(1) // the agent's answer
    const wrote = await h.write(id, '  Hi, this is Maya from the shop.  ')
    expect(wrote.status).toBe(201)
    expect(wrote.body).toMatchObject({ conversationId: id, channel: 'chatapp', author: 'teammate', text: 'Hi, this is Maya from the shop.', delivery: { status: 'accepted' } })
    const out = sent('+14155550701')
    expect(out).toHaveLength(2)
    expect(out[1]).toMatchObject({ from: '+14155550700', content: { type: 'text', text: 'Hi, this is Maya from the shop.' }, platformMessageId: wrote.body.delivery.platformMessageId })
    expect((await h.conversation(id)).status).toBe('handled')
    await until(
      'the receipts',
      () => h.teammateMessages(id),
      (m) => m[0]?.delivery?.status === 'delivered',
    )
    expect(await h.rows('usage_records', { kind: 'reply_charge', messageId: wrote.body.id })).toHaveLength(1)
    // The customer answers: the agent stays quiet, the teammate has it.
    await h.inbound({ channel: 'chatapp', from: '+14155550701', text: 'Thanks Maya' })
    expect(sent('+14155550701')).toHaveLength(2)
    const shown = (await s.console('GET', `/workspaces/${dev.id}/conversations/${id}/messages`)).body.items.map((m: any) => m.author)
    expect(shown).toEqual(['customer', 'teammate', 'agent', 'customer'])
  })

  test('chat app refusals change nothing: opted out 409, number released 409, the platform refusing 502', async () => {
    const optedOut = await h.inbound({ channel: 'chatapp', from: '+14155550702', text: 'STOP' })
    const stop = await h.write(optedOut, 'Sorry to see you go')
    expect(stop.status).toBe(409)
    expect(stop.body.error).toContain('opted out')

    h.messaging().sandbox.refuse.add('+14155550703')
    const refusedId = await h.inbound({ channel: 'chatapp', from: '+14155550703', text: 'Hello?' })
    const refused = await h.write(refusedId, 'Hello from the team')
    expect(refused.status).toBe(502)
    expect(refused.body).toMatchObject({ code: '131026' })
    expect(refused.body.error).toContain('refused')

    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550710', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    const gone = await h.inbound({ channel: 'chatapp', from: '+14155550711', to: '+14155550710', text: 'Hello?' })
    expect((await s.console('DELETE', `/workspaces/${dev.id}/phone-numbers/%2B14155550710`)).status).toBe(204)
    const released = await h.write(gone, 'Still there?')
    expect(released.status).toBe(409)
    expect(released.body.error).toStartWith('number disconnected')

    for (const id of [optedOut, refusedId, gone]) {
      expect((await h.conversation(id)).status).toBe('active')
      expect(await h.teammateMessages(id)).toEqual([])
    }
    expect(sent('+14155550702')).toEqual([])
    expect(sent('+14155550711')).toHaveLength(1) // the agent's answer only
  })

  test('bot app: sent by the bot to the chat and taken over; a disconnected bot is 409', async () => {
    const bot = '6100000001'
    expect((await s.console('PUT', `/workspaces/${dev.id}/botapp`, { agent, token: `${bot}:AAHsandboxTokenForTests_0123456789` })).status).toBe(200)
    const id = await h.inbound({ channel: 'botapp', from: '5151', to: bot, text: 'What time do you open on Sunday?' })
    const wrote = await h.write(id, 'Hi, Maya here: we open at 8.')
    expect(wrote.status).toBe(201)
    expect(wrote.body).toMatchObject({ channel: 'botapp', author: 'teammate', delivery: { status: 'accepted' } })
    expect(sent('5151').at(-1)).toMatchObject({ from: bot, content: { type: 'text', text: 'Hi, Maya here: we open at 8.' } })
    expect((await h.conversation(id)).status).toBe('handled')
    expect(await h.rows('usage_records', { kind: 'reply_charge', messageId: wrote.body.id })).toHaveLength(1)

    expect((await s.console('DELETE', `/workspaces/${dev.id}/botapp/${bot}`)).status).toBe(200)
    const gone = await h.write(id, 'Are you there?')
    expect(gone.status).toBe(409)
    expect(gone.body.error).toContain(`bot ${bot} is no longer connected`)
    expect(await h.teammateMessages(id)).toHaveLength(1)
  })

  test('email: mailed to the address under the agent’s subject, taken over, delivery sent', async () => {
    const id = await h.inbound({ channel: 'email', from: 'Ana@Example.com', to: agent, text: 'What time do you open on Sunday?' })
    await h.messaging().emailInbound.settled()
    const outbox = async () => (await s.console('GET', '/outbox?limit=100')).body.items.filter((m: any) => m.to === 'ana@example.com')
    expect(await outbox()).toHaveLength(1)
    const wrote = await h.write(id, 'Hi Ana, Maya from the shop here.')
    expect(wrote.status).toBe(201)
    expect(wrote.body).toMatchObject({ channel: 'email', author: 'teammate', delivery: { status: 'sent' } })
    const mails = await outbox()
    expect(mails).toHaveLength(2)
    expect(mails.find((m: any) => m.text === 'Hi Ana, Maya from the shop here.')).toMatchObject({ subject: 'Re: your message to Bean There' })
    expect((await h.conversation(id)).status).toBe('handled')
    // No platform, no reply charge.
    expect(await h.rows('usage_records', { kind: 'reply_charge', messageId: wrote.body.id })).toEqual([])
    await h.inbound({ channel: 'email', from: 'ana@example.com', to: agent, text: 'Thank you!' })
    await h.messaging().emailInbound.settled()
    expect(await outbox()).toHaveLength(2)
  })

  test('a voice call 409, an unknown conversation 404, blank or too long text 400', async () => {
    const voice = await s.server.services.of(conversationsFeature).conversations.start({ workspaceId: dev.id, agentId: agent, channel: 'voice' })
    const call = await h.write(voice.id, 'Hello')
    expect(call.status).toBe(409)
    expect(call.body.error).toContain('voice call')
    expect((await h.write('conv_nope', 'Hello')).status).toBe(404)
    const id = (await s.console('GET', `/workspaces/${dev.id}/conversations?channel=chatapp`)).body.items[0].id
    expect((await h.write(id, '   ')).status).toBe(400)
    expect((await h.write(id, 'x'.repeat(4_001))).status).toBe(400)
  })

  // Last: it moves the service clock a day on.
  test("chat app: the customer's 24-hour window closed is 409 with windowClosedAt; their next message opens it again", async () => {
    const id = await h.inbound({ channel: 'chatapp', from: '+14155550704', text: 'Hello?' })
    const before = sent('+14155550704').length
    expect((await s.console('POST', '/clock/advance', { ms: 24 * 60 * 60 * 1000 + 1 })).status).toBe(200)
    const closed = await h.write(id, 'Sorry for the wait')
    expect(closed.status).toBe(409)
    expect(closed.body.error).toContain("customer's 24-hour window is closed")
    expect(closed.body.windowClosedAt).toEqual(expect.any(String))
    expect(sent('+14155550704')).toHaveLength(before)
    expect((await h.conversation(id)).status).toBe('active')
    expect(await h.teammateMessages(id)).toEqual([])
    // A teammate who took it over waits for the customer too; once they write, the reply goes.
    expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/takeover`)).status).toBe(200)
    expect((await h.write(id, 'Sorry for the wait')).status).toBe(409)
    await h.inbound({ channel: 'chatapp', from: '+14155550704', text: 'Anyone?' })
    expect((await h.write(id, 'Sorry for the wait')).status).toBe(201)
    expect(sent('+14155550704').at(-1)).toMatchObject({ content: { type: 'text', text: 'Sorry for the wait' } })
  })
})

describe('email through an SMTP server', () => {
  let smtp: SmtpFake
  let s: TestServer
  let dev: { id: string; key: string }
  let agent: string
  let h: ReturnType<typeof helpers>

  beforeAll(async () => {
    smtp = await startSmtp()
    s = await startTestServer({ SMTP_URL: smtp.url, SMTP_FROM: 'Bean There <shop@platform.test>' })
    dev = await s.developer({ plan: 'scale', name: 'Mail team' })
    agent = (await s.agent(dev.key, { name: 'Mail agent' })).id
    h = helpers(s, () => dev.id)
  })
  afterAll(async () => {
    await s?.stop()
    await smtp?.stop()
  })

  test('the message reaches the mail server; its refusal is a 502 with the SMTP code and nothing stored', async () => {
    const id = await h.inbound({ channel: 'email', from: 'leo@example.com', to: agent, text: 'Hello?' })
    await h.messaging().emailInbound.settled()
    const answered = smtp.mails.length
    const wrote = await h.write(id, 'Hi Leo, Maya from the shop.')
    expect(wrote.status).toBe(201)
    expect(smtp.mails).toHaveLength(answered + 1)
    expect(smtp.mails.at(-1)!.to).toEqual(['leo@example.com'])
    expect(smtp.mails.at(-1)!.raw).toContain('Hi Leo, Maya from the shop.')

    smtp.refuseNext(1, 550)
    const refused = await h.write(id, 'Are you there?')
    expect(refused.status).toBe(502)
    expect(refused.body).toMatchObject({ code: 550 })
    expect((await h.teammateMessages(id)).map((m: any) => m.parts[0].text)).toEqual(['Hi Leo, Maya from the shop.'])
  })
})
