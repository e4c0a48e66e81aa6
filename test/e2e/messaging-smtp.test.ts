/**
 * Inbound mail over SMTP (`SMTP_LISTEN_PORT`): a real SMTP client (nodemailer) sends to
 * `{agentId}@…`; the agent answers by email (the outbox here) in the same conversation as the
 * console's email inbound; a recipient that is no agent is refused at RCPT, an HTML-only mail is
 * read as text, and a mail with no text is refused after DATA with nothing stored.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTransport } from 'nodemailer'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let agent: string
let port: number

beforeAll(async () => {
  s = await startTestServer({ SMTP_LISTEN_PORT: '0' })
  dev = await s.developer({ plan: 'scale', name: 'Mail' })
  agent = (await s.agent(dev.key, { name: 'Mail agent' })).id
  expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' } })).status).toBe(201)
  port = s.server.services.of(messagingFeature).smtp!.port
})
afterAll(() => s?.stop())

const send = (mail: Record<string, unknown>) => createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true }).sendMail({ from: 'Priya <priya@example.com>', ...mail })
const outbox = async () => (await s.console('GET', '/outbox?limit=100')).body.items.filter((m: any) => m.to === 'priya@example.com')

test('a mail to the agent is answered by email, in one conversation with the address', async () => {
  expect(port).toBeGreaterThan(0)
  const info = await send({ to: `${agent}@mail.example.com`, subject: 'Sunday', text: 'What time do you open on Sunday?' })
  expect(info.accepted).toEqual([`${agent}@mail.example.com`])
  await s.server.services.of(messagingFeature).emailInbound.settled()
  const answers = await outbox()
  expect(answers).toHaveLength(1)
  expect(answers[0].subject).toBe('Re: your message to Mail agent')
  expect(answers[0].text).toContain('8 am to 2 pm')

  await send({ to: `${agent}@mail.example.com`, subject: 'Thanks', html: '<p>Thank <b>you</b>!</p>' })
  await s.server.services.of(messagingFeature).emailInbound.settled()
  const conversations = (await s.api('GET', '/conversations?channel=email', { key: dev.key })).body.items
  expect(conversations).toHaveLength(1)
  const texts = (await s.api('GET', `/conversations/${conversations[0].id}/messages`, { key: dev.key })).body.items.filter((m: any) => m.author === 'customer').map((m: any) => m.parts[0].text)
  expect(texts.sort()).toEqual(['Thank you!', 'What time do you open on Sunday?'])
})

test('a recipient that is no agent is refused at RCPT; a mail without text after DATA; nothing is stored', async () => {
  const before = (await s.api('GET', '/conversations?channel=email', { key: dev.key })).body.items.length
  const unknown = await send({ to: 'ag_doesnotexist@mail.example.com', text: 'hello' }).catch((e) => e)
  expect(unknown.responseCode).toBe(550)
  expect(String(unknown.response)).toContain('no agent')
  const notAnAgent = await send({ to: 'sales@mail.example.com', text: 'hello' }).catch((e) => e)
  expect(notAnAgent.responseCode).toBe(550)
  const empty = await send({ to: `${agent}@mail.example.com`, text: '   ' }).catch((e) => e)
  expect(empty.responseCode).toBe(550)
  expect(String(empty.response)).toContain('no text')
  expect((await s.api('GET', '/conversations?channel=email', { key: dev.key })).body.items.length).toBe(before)
})
