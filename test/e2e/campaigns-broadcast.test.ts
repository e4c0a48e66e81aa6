/**
 * Chat-app campaigns end to end through the running server, the sandbox platform and the manual
 * clock: a 50-recipient broadcast (opted-out, unknown and refused recipients among them) reaching
 * `sent` with exact counts and its `campaign.finished` webhook; receipts and a reply moving counts;
 * pause → nothing more sent → resume → finished, everyone once; cancel from each state; every 409
 * naming the state; key scopes; lists; an agent's or a customer's deletion cancelling its campaigns
 * (restore does not restart them). Calling campaigns: campaigns-calling.test.ts.
 * Sends are paced (CAMPAIGN_SEND_RATE=50/s), so a pause right after a start lands mid-broadcast.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { campaignKind } from '../../src/features/campaigns/actor'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1000
const dir = mkdtempSync(join(tmpdir(), 'svc-campaigns-'))
const env = { CONSOLE_TOKEN: 'campaigns-console-token-0123456789', CAMPAIGN_SEND_RATE: '50' }
let s: TestServer
let dev: { id: string; key: string }
let agent: string
let keys: { read: string; build: string }
const NUMBER = '+14155550700'
/** 50 recipients: 44 contacts (named), 1 the platform refuses, 3 opted out, 2 not contacts. */
const ok = Array.from({ length: 44 }, (_, i) => `+1415555${String(1000 + i)}`)
const refused = '+14155551100'
const optedOut = ['+14155551201', '+14155551202', '+14155551203']
const unknown = ['+14155551301', '+14155551302']
const everyone = [...ok, refused, ...optedOut, ...unknown]

const sandbox = () => s.server.services.of(messagingFeature).sandbox
const sentTo = (phone: string, since = 0) => sandbox().sent.filter((m) => m.to === phone && m.content.type === 'template' && m.at >= since)
const sends = (phones: string[]) => phones.reduce((n, p) => n + sentTo(p).length, 0)
const create = (body: Record<string, unknown>, ws = dev.id) =>
  s.console('POST', `/workspaces/${ws}/campaigns`, { agent, name: 'Spring sale', kind: 'chatapp', template: 'promo', recipients: everyone, ...body })
const start = (id: string, ws = dev.id) => s.console('POST', `/workspaces/${ws}/campaigns/${id}/start`)
const get = (id: string, key = dev.key, workspace?: string) => s.api('GET', `/campaigns/${id}`, { key, workspace })
const move = (id: string, m: 'pause' | 'resume' | 'cancel', key = dev.key) => s.api('POST', `/campaigns/${id}/${m}`, { key })
const finished = (id: string) =>
  until(
    `campaign ${id} ends`,
    () => get(id),
    (r) => ['sent', 'failed', 'cancelled'].includes(r.body.status),
  )
/** No recipient of the campaign is still being handed over (in-flight sends have completed). */
const quiet = async (id: string) => {
  const rows = await s.server.services.store.collection<any>({ name: 'campaign_recipients', indexes: [] })
  await until(
    'in-flight sends complete',
    () => rows.count({ campaignId: id, status: 'sending' }),
    (n) => n === 0,
  )
}
/** No effect of the campaign is in flight and none of its sends is: nothing more can be sent without a new event. */
const settledCampaign = async (id: string) => {
  await s.server.services.runtime.settle(campaignKind.kind, id)
  await quiet(id)
}
const events = async (type: string, id: string) => (await s.server.services.bus.events.find({ type })).filter((e: any) => e.data.id === id)

beforeAll(async () => {
  s = await startTestServer(env, dir)
  dev = await s.developer({ plan: 'scale', name: 'Campaigns' })
  agent = (await s.agent(dev.key, { name: 'Broadcaster', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: NUMBER, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
  expect(
    (
      await s.console('POST', `/workspaces/${dev.id}/templates`, {
        name: 'promo',
        language: 'en',
        category: 'marketing',
        body: 'Hi {{1}}, spring prices are here',
        variableLabels: [{ position: 1, sample: 'there' }],
      })
    ).status,
  ).toBe(201)
  for (const [i, phone] of [...ok, refused].entries()) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone, name: `Person ${i}` })).status).toBe(201)
  for (const phone of optedOut) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone, optedOut: true })).status).toBe(201)
  sandbox().refuse.add(refused)
  keys = {
    read: (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'reader', scope: 'read' })).body.key,
    build: (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'builder', scope: 'build' })).body.key,
  }
  // campaign.finished reaches a v1 webhook (an email address: the embedded outbox keeps it).
  expect((await s.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'ops@example.com', events: ['campaign.finished'] } })).status).toBe(201)
})
afterAll(async () => {
  await s?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('broadcast', () => {
  /** The first broadcast (sent); later tests use it as the `sent` campaign. */
  let id = ''

  test('created as a draft in the console with its recipients; nothing sent before the start', async () => {
    const made = await create({})
    expect(made.status).toBe(201)
    id = made.body.id
    expect(made.body).toMatchObject({
      id: expect.stringMatching(/^cmp_/),
      agent,
      name: 'Spring sale',
      kind: 'chatapp',
      status: 'draft',
      template: 'promo',
      purpose: null,
      startedAt: null,
      finishedAt: null,
      lastError: null,
    })
    expect(made.body.counts).toEqual({ recipients: 50, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, voicemails: 0 })
    expect(sends(everyone)).toBe(0)
  })

  test('started, it reaches sent with exact counts: everyone reachable once, personalised; the skipped and the refused not', async () => {
    const started = await start(id)
    expect(started.status).toBe(200)
    expect(started.body.status).toBe('sending')
    const done = await finished(id)
    expect(done.body.status).toBe('sent')
    await until(
      'receipts recorded',
      () => get(id),
      (r) => r.body.counts.delivered === 44,
    )
    const c = (await get(id)).body
    expect(c.counts).toEqual({ recipients: 50, sent: 44, delivered: 44, read: 0, replied: 0, failed: 1, skipped: 5, voicemails: 0 })
    expect(c.startedAt).toBeString()
    expect(c.finishedAt).toBeString()
    for (const phone of ok) expect(sentTo(phone)).toHaveLength(1)
    for (const phone of [...optedOut, ...unknown, refused]) expect(sentTo(phone)).toHaveLength(0)
    expect(sentTo(ok[3])[0]!.content).toEqual({ type: 'template', template: { name: 'promo', language: 'en', variables: ['Person 3'] } })
    expect(sentTo(ok[0])[0]!.from).toBe(NUMBER)
  })

  test('a read receipt and a reply move the counts; campaign.finished went out once, through the webhook', async () => {
    const [a, b] = [sentTo(ok[0])[0]!, sentTo(ok[1])[0]!]
    for (const m of [a, b]) await sandbox().report({ platformMessageId: m.platformMessageId, status: 'read', at: Date.now() })
    // A late `delivered` after `read` changes nothing.
    await sandbox().report({ platformMessageId: a.platformMessageId, status: 'delivered', at: Date.now() })
    expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: ok[2], to: NUMBER, text: 'Tell me more' })).status).toBe(201)
    const c = await until(
      'counts move',
      () => get(id),
      (r) => r.body.counts.replied === 1 && r.body.counts.read === 3,
    )
    expect(c.body.counts).toEqual({ recipients: 50, sent: 44, delivered: 44, read: 3, replied: 1, failed: 1, skipped: 5, voicemails: 0 })
    const ev = await events('campaign.finished', id)
    expect(ev).toHaveLength(1)
    expect(ev[0].data).toMatchObject({ id, status: 'sent', counts: { recipients: 50, failed: 1, skipped: 5 } })
    const mail = await until(
      'webhook email',
      async () => (await s.console('GET', '/outbox?limit=100')).body.items,
      (items: any[]) => items.some((m) => m.to === 'ops@example.com' && m.subject.startsWith('campaign.finished')),
    )
    expect(mail.filter((m: any) => m.to === 'ops@example.com' && m.eventId === ev[0].id)).toHaveLength(1)
  })

  test('pause: nothing more is sent; resume sends to everyone not yet reached; each once', async () => {
    const made = (await create({ name: 'Paused sale', recipients: ok })).body
    const before = sends(ok)
    expect((await start(made.id)).body.status).toBe('sending')
    const paused = await move(made.id, 'pause')
    expect(paused.status).toBe(200)
    expect(paused.body.status).toBe('paused')
    await quiet(made.id)
    const atPause = sends(ok) - before
    expect(atPause).toBeLessThan(ok.length)
    // Service time passes: the advance delivers every timer due and waits for the campaign to
    // settle, and every send it could have started has completed, so none can come later.
    await s.console('POST', '/clock/advance', { ms: 60 * SEC })
    await settledCampaign(made.id)
    expect(sends(ok) - before).toBe(atPause)
    expect((await get(made.id)).body).toMatchObject({ status: 'paused', counts: { sent: atPause } })
    expect((await move(made.id, 'resume')).body.status).toBe('sending')
    expect((await finished(made.id)).body.status).toBe('sent')
    expect(sends(ok) - before).toBe(ok.length)
    for (const phone of ok) expect(sentTo(phone)).toHaveLength(2) // this campaign's and the first one's
    await until(
      'receipts',
      () => get(made.id),
      (r) => r.body.counts.delivered === ok.length,
    )
    expect((await get(made.id)).body.counts).toEqual({ recipients: 44, sent: 44, delivered: 44, read: 0, replied: 0, failed: 0, skipped: 0, voicemails: 0 })
  })

  test('cancel from draft, sending and paused; cancelled is permanent; every refused move answers 409 naming the state', async () => {
    const draft = (await create({ name: 'Draft one', recipients: ok.slice(0, 5) })).body.id
    const c1 = await move(draft, 'cancel')
    expect(c1.body).toMatchObject({ status: 'cancelled', finishedAt: expect.any(String) })

    const sending = (await create({ name: 'Sending one', recipients: ok })).body.id
    await start(sending)
    expect((await move(sending, 'cancel')).body.status).toBe('cancelled')

    const paused = (await create({ name: 'Paused one', recipients: ok })).body.id
    await start(paused)
    await move(paused, 'pause')
    expect((await move(paused, 'cancel')).body.status).toBe('cancelled')
    await quiet(sending)
    await quiet(paused)
    const afterCancel = sends(ok)
    await s.console('POST', '/clock/advance', { ms: 60 * SEC })
    for (const c of [sending, paused]) await settledCampaign(c)
    expect(sends(ok)).toBe(afterCancel)
    for (const c of [draft, sending, paused]) expect((await events('campaign.finished', c)).map((e: any) => e.data.status)).toEqual(['cancelled'])

    const fresh = (await create({ name: 'Draft two', recipients: ok.slice(0, 2) })).body.id
    const refusals: [string, 'pause' | 'resume' | 'cancel', string][] = [
      [fresh, 'pause', 'draft'],
      [fresh, 'resume', 'draft'],
      [paused, 'pause', 'cancelled'],
      [paused, 'resume', 'cancelled'],
      [paused, 'cancel', 'cancelled'],
      [id, 'pause', 'sent'],
      [id, 'resume', 'sent'],
      [id, 'cancel', 'sent'],
    ]
    for (const [c, m, state] of refusals) {
      const r = await move(c, m)
      expect(r.status).toBe(409)
      expect(r.body.state).toBe(state)
      expect(r.body.error).toContain(`campaign is ${state}`)
    }
    const again = await start(sending)
    expect(again.status).toBe(409)
    expect(again.body.error).toContain('campaign is cancelled')
    // A sending campaign refuses resume (and start) naming `sending`.
    const live = (await create({ name: 'Live one', recipients: ok })).body.id
    await start(live)
    const r = await move(live, 'resume')
    expect([r.status, r.body.state]).toEqual([409, 'sending'])
    const s2 = await start(live)
    expect(s2.status).toBe(409)
    await move(live, 'cancel')
    await quiet(live)
  })

  test('key scopes: a read key reads but cannot move; build pauses and cancels, not resume; full resumes', async () => {
    const c = (await create({ name: 'Scopes', recipients: ok })).body.id
    expect((await get(c, keys.read)).status).toBe(200)
    expect((await s.api('GET', '/campaigns', { key: keys.read })).status).toBe(200)
    await start(c)
    expect((await move(c, 'pause', keys.read)).status).toBe(403)
    expect((await move(c, 'pause', keys.build)).body.status).toBe('paused')
    const resume = await move(c, 'resume', keys.build)
    expect(resume.status).toBe(403)
    expect(resume.body.error).toContain('full')
    expect((await move(c, 'cancel', keys.read)).status).toBe(403)
    const resumed = await s.api('POST', `/campaigns/${c}/resume`, { key: dev.key, headers: { 'idempotency-key': `resume-${c}` } })
    expect(resumed.body.status).toBe('sending')
    // A retried resume with the same key replays the first answer instead of a 409.
    const replay = await s.api('POST', `/campaigns/${c}/resume`, { key: dev.key, headers: { 'idempotency-key': `resume-${c}` } })
    expect([replay.status, replay.body.status, replay.headers.get('idempotent-replayed')]).toEqual([200, 'sending', 'true'])
    expect((await move(c, 'resume')).status).toBe(409)
    expect((await move(c, 'cancel', keys.build)).body.status).toBe('cancelled')
    await quiet(c)
  })

  test('GET /campaigns: newest first, status filter, paging; another workspace sees nothing', async () => {
    const all = (await s.api('GET', '/campaigns?limit=100', { key: dev.key })).body.items
    expect(all).toHaveLength(8) // the eight made by the tests above
    expect(all.map((c: any) => c.createdAt)).toEqual([...all.map((c: any) => c.createdAt)].sort().reverse())
    expect(all[all.length - 1].id).toBe(id)
    const sent = (await s.api('GET', '/campaigns?status=sent', { key: dev.key })).body.items
    expect(sent.map((c: any) => c.status)).toEqual(['sent', 'sent'])
    const p1 = (await s.api('GET', '/campaigns?limit=2', { key: dev.key })).body
    const p2 = (await s.api('GET', `/campaigns?limit=2&cursor=${p1.nextCursor}`, { key: dev.key })).body
    expect([...p1.items, ...p2.items].map((c: any) => c.id)).toEqual(all.slice(0, 4).map((c: any) => c.id))
    expect((await s.api('GET', '/campaigns?status=nope', { key: dev.key })).status).toBe(400)
    const other = await s.developer({ name: 'Other' })
    expect((await s.api('GET', '/campaigns', { key: other.key })).body.items).toEqual([])
    expect((await get(id, other.key)).status).toBe(404)
    expect((await move(id, 'pause', other.key)).status).toBe(404)
  })

  test('console create checks: template, purpose, recipients, agent', async () => {
    expect((await create({ template: 'nope' })).status).toBe(404)
    expect((await create({ template: undefined })).body.error).toStartWith('template')
    expect((await create({ purpose: 'hi' })).body.error).toStartWith('purpose')
    expect((await create({ recipients: ['not a phone'] })).body.error).toStartWith('recipients[0]')
    expect((await create({ recipients: [] })).status).toBe(400)
    expect((await create({ agent: 'ag_missing' })).body.error).toStartWith('agent')
    expect((await create({ kind: 'voice', template: undefined })).body.error).toStartWith('purpose')
  })
})

test('deleting an agent cancels its campaigns', async () => {
  const other = (await s.agent(dev.key, { name: 'Short-lived' })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550701', source: 'rented', channel: 'chatapp', agent: other })).status).toBe(201)
  const c = (await create({ agent: other, name: 'Orphan', recipients: ok.slice(0, 3) })).body.id
  expect((await s.api('DELETE', `/agents/${other}`, { key: dev.key })).status).toBe(204)
  expect((await get(c)).body).toMatchObject({ status: 'cancelled', counts: { sent: 0 } })
})

/** A customer of `dev` with an agent on a chat-app number and an approved template `promo`. */
async function broadcastingCustomer(name: string, number: string) {
  const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name } })).body.id as string
  const cAgent = (await s.agent(dev.key, { name: `${name} bot` }, customer)).id as string
  expect((await s.console('POST', `/workspaces/${customer}/phone-numbers`, { number, source: 'rented', channel: 'chatapp', agent: cAgent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${customer}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'Hello {{1}}' })).status).toBe(201)
  return { customer, cAgent }
}

describe("a customer's campaigns", () => {
  test('a platform refusing most sends fails the campaign; the developer is told with the customer name in the title', async () => {
    const { customer, cAgent } = await broadcastingCustomer('Acme Retail', '+14155550777')
    const dead = Array.from({ length: 60 }, (_, i) => `+1415556${String(1000 + i)}`)
    for (const phone of dead) {
      expect((await s.console('POST', `/workspaces/${customer}/contacts`, { phone })).status).toBe(201)
      sandbox().refuse.add(phone)
    }
    const c = (await s.console('POST', `/workspaces/${customer}/campaigns`, { agent: cAgent, name: 'Doomed', kind: 'chatapp', template: 'promo', recipients: dead })).body.id
    await start(c, customer)
    const done = await until(
      'failed',
      () => get(c, dev.key, customer),
      (r) => r.body.status === 'failed',
    )
    expect(done.body.lastError).toMatch(/^the platform refused \d+ of the last 50 sends \(last: the platform refused it: .+\); the rest were not sent$/)
    expect(done.body.counts.failed).toBeGreaterThanOrEqual(40)
    expect(done.body.counts.failed).toBeLessThan(60)
    const note = await until(
      'notified',
      async () => (await s.console('GET', `/workspaces/${dev.id}/notifications`)).body.items,
      (items: any[]) => items.some((n) => n.data.campaignId === c),
    )
    const n = note.find((x: any) => x.data.campaignId === c)
    expect(n).toMatchObject({ kind: 'campaign.failed', title: '[Acme Retail] Campaign failed: Doomed', customer: { id: customer, name: 'Acme Retail' } })
    expect((await events('campaign.finished', c)).map((e: any) => e.data.status)).toEqual(['failed'])
  })

  test('deleting a customer cancels its campaigns; restoring does not restart them', async () => {
    const { customer, cAgent } = await broadcastingCustomer('Beta Shop', '+14155550778')
    const people = Array.from({ length: 40 }, (_, i) => `+1415557${String(1000 + i)}`)
    for (const phone of people) expect((await s.console('POST', `/workspaces/${customer}/contacts`, { phone })).status).toBe(201)
    const mk = async (name: string) => (await s.console('POST', `/workspaces/${customer}/campaigns`, { agent: cAgent, name, kind: 'chatapp', template: 'promo', recipients: people })).body.id as string
    const draft = await mk('Draft')
    const paused = await mk('Paused')
    await start(paused, customer)
    expect((await s.api('POST', `/campaigns/${paused}/pause`, { key: dev.key, workspace: customer })).body.status).toBe('paused')
    const sending = await mk('Sending')
    await start(sending, customer)
    // The console has no route to release a number yet; a customer holding one cannot be deleted.
    await (await s.server.services.store.collection<any>({ name: 'phone_numbers', indexes: [] })).deleteMany({ workspaceId: customer })
    expect((await s.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
    const rows = await s.server.services.store.collection<any>({ name: 'campaigns', indexes: [] })
    for (const c of [draft, paused, sending])
      await until(
        `${c} cancelled`,
        () => rows.get(c),
        (doc) => doc.status === 'cancelled',
      )
    await quiet(sending)
    await quiet(paused)
    const count = sends(people)
    expect((await s.api('POST', `/customers/${customer}/restore`, { key: dev.key })).status).toBe(200)
    await s.console('POST', '/clock/advance', { ms: 60 * SEC })
    for (const c of [paused, sending]) await settledCampaign(c)
    for (const c of [draft, paused, sending]) expect((await get(c, dev.key, customer)).body.status).toBe('cancelled')
    expect(sends(people)).toBe(count)
    for (const c of [draft, paused, sending]) expect((await events('campaign.finished', c)).map((e: any) => e.data.status)).toEqual(['cancelled'])
  })
})
