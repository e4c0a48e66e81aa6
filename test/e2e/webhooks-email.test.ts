/**
 * Email webhooks: an email address receives one email per event through SMTP (nodemailer), here a
 * real local SMTP server (test/fakes/smtp.ts) on 127.0.0.1 with the credentials from SMTP_URL. The
 * email carries the same signature and event id headers and the signed JSON as an attachment.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { mailAttachment, mailHeaders, type SmtpFake, startSmtp } from '../fakes/smtp'
import { WAIT_MS } from '../features/webhooks/receiver'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let smtp: SmtpFake
let server: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  smtp = await startSmtp()
  server = await startTestServer({ SMTP_URL: smtp.url, SMTP_FROM: 'Agent Platform <hooks@platform.test>' })
  dev = await server.developer()
  agent = (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Ava' } })).body.id
})

afterAll(async () => {
  await server?.stop()
  await smtp?.stop()
})

test('one email per event, signed like an HTTP delivery', async () => {
  const hook = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'Ops@Example.com', events: ['lead.captured', 'conversation.escalated'] } })
  expect(hook.status).toBe(201)
  expect(hook.body.url).toBe('ops@example.com')
  const bus = server.server.services.bus
  const first = await bus.publish({ type: 'lead.captured', workspaceId: dev.id, agentId: agent, data: { name: 'Ria', email: 'ria@example.com' } })
  await bus.publish({ type: 'conversation.escalated', workspaceId: dev.id, agentId: agent, data: { conversationId: 'conv_1' } })
  await bus.publish({ type: 'conversation.resolved', workspaceId: dev.id, agentId: agent, data: { conversationId: 'conv_1' } })
  await until('two emails', () => smtp.mails.length >= 2, WAIT_MS)
  // Each delivery owed was recorded when its event was dispatched (before publish resolved) and is
  // removed once its outcome is known: with none left, no further email can be sent.
  const owed = await server.server.services.store.collection({ name: 'v1_webhook_deliveries', indexes: [] })
  await until('the deliveries to finish', async () => (await owed.count({ webhookId: hook.body.id })) === 0, WAIT_MS)
  expect(smtp.mails).toHaveLength(2)
  const mail = smtp.mails.find((m) => mailHeaders(m.raw)['x-service-event-id'] === first.id)!
  expect(mail.to).toEqual(['ops@example.com'])
  expect(mail.from).toBe('hooks@platform.test')
  const headers = mailHeaders(mail.raw)
  expect(headers.subject).toContain('lead.captured')
  const json = mailAttachment(mail.raw, 'event.json')!
  expect(JSON.parse(json)).toMatchObject({ event: 'lead.captured', data: { name: 'Ria', email: 'ria@example.com' } })
  expect(headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', hook.body.signingSecret).update(json).digest('hex')}`)
  const read = await until(
    'the outcome',
    async () => {
      const r = await server.api('GET', `/webhooks/${hook.body.id}`, { key: dev.key })
      return r.body.delivery.lastSentAt ? r.body : undefined
    },
    WAIT_MS,
  )
  expect(read).toMatchObject({ enabled: true, delivery: { failuresInARow: 0, lastStatus: 250 } })
  // Sent through SMTP, so nothing is kept in the outbox.
  expect((await server.console('GET', '/outbox')).body).toEqual({ items: [], nextCursor: null })
})

test('a refused email is a failed delivery with the SMTP reply code', async () => {
  const hook = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'bounce@example.com', events: ['campaign.finished'] } })
  smtp.refuseNext(1, 550)
  await server.server.services.bus.publish({ type: 'campaign.finished', workspaceId: dev.id, agentId: agent, data: { id: 'cmp_1' } })
  const read = await until(
    'the failure',
    async () => {
      const r = await server.api('GET', `/webhooks/${hook.body.id}`, { key: dev.key })
      return r.body.delivery.failuresInARow === 1 ? r.body : undefined
    },
    WAIT_MS,
  )
  expect(read.delivery.lastStatus).toBe(550)
  expect(read.delivery.lastError).toContain('bounce@example.com')
})
