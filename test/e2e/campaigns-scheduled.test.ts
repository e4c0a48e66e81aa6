/**
 * Scheduled campaigns end to end on the manual clock: a campaign created with `scheduledAt` waits
 * as a draft and starts itself then (also across a restart: a durable timer); cancelled before, it
 * never starts; started by hand before, it starts once and not again at the time; `scheduledAt`
 * is checked (an instant, in the future, within a year). Starting (by hand or by the clock) and
 * resuming need the agent published: 409 by hand; the scheduled start fails the campaign with
 * `lastError` saying so, and the developer is told.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const MIN = 60_000
const HOUR = 60 * MIN
const dir = mkdtempSync(join(tmpdir(), 'svc-campaigns-scheduled-'))
// Paced (5 sends a second) so a pause right after a start lands before the last recipient.
const env = { CONSOLE_TOKEN: 'campaigns-scheduled-console-token-0123', CAMPAIGN_SEND_RATE: '5' }
let s: TestServer
let dev: { id: string; key: string }
let agent: string
const NUMBER = '+14155558800'
const people = ['+14155558801', '+14155558802', '+14155558803']

const sandbox = () => s.server.services.of(messagingFeature).sandbox
const sentTo = (phone: string) => sandbox().sent.filter((m) => m.to === phone && m.content.type === 'template')
const sends = () => people.reduce((n, p) => n + sentTo(p).length, 0)
const now = async () => Date.parse((await s.console('GET', '/clock')).body.now)
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const inAnHour = async (ms = HOUR) => new Date((await now()) + ms).toISOString()
const create = (body: Record<string, unknown>, ws = dev.id) =>
  s.console('POST', `/workspaces/${ws}/campaigns`, { agent, name: 'Morning offer', kind: 'chatapp', template: 'offer', recipients: people, ...body })
const start = (id: string) => s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/start`)
const get = (id: string, key = dev.key) => s.api('GET', `/campaigns/${id}`, { key })
const ended = (id: string) =>
  until(
    `campaign ${id} ends`,
    () => get(id),
    (r) => ['sent', 'failed', 'cancelled'].includes(r.body.status),
  )
const legacy = (path: string, key: string) => fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })

/** A workspace with a chat-app number on `agentId`, an approved template and the people as contacts. */
async function broadcaster(ws: string, agentId: string, number: string) {
  expect((await s.console('POST', `/workspaces/${ws}/phone-numbers`, { number, source: 'rented', channel: 'chatapp', agent: agentId })).status).toBe(201)
  expect(
    (
      await s.console('POST', `/workspaces/${ws}/templates`, {
        name: 'offer',
        language: 'en',
        category: 'marketing',
        body: 'Hi {{1}}, a new offer is here',
        variableLabels: [{ position: 1, sample: 'there' }],
      })
    ).status,
  ).toBe(201)
  for (const phone of people) await s.console('POST', `/workspaces/${ws}/contacts`, { phone, name: 'Pat' })
}

beforeAll(async () => {
  s = await startTestServer(env, dir)
  dev = await s.developer({ plan: 'scale', name: 'Scheduler' })
  agent = (await s.agent(dev.key, { name: 'Broadcaster' })).id
  await broadcaster(dev.id, agent, NUMBER)
})
afterAll(async () => {
  await s?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('a scheduled campaign', () => {
  test('waits as a draft with its scheduledAt, then starts itself at that instant and reaches everyone once', async () => {
    const at = await inAnHour()
    const made = await create({ scheduledAt: at })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ status: 'draft', scheduledAt: at, startedAt: null })
    const id = made.body.id
    expect((await get(id)).body.scheduledAt).toBe(at)
    await advance(HOUR - MIN)
    expect((await get(id)).body.status).toBe('draft')
    expect(sends()).toBe(0)
    await advance(MIN)
    const done = await ended(id)
    expect(done.body).toMatchObject({ status: 'sent', scheduledAt: at, counts: { recipients: 3, sent: 3 } })
    expect(done.body.startedAt).toBe(at) // the clock stood exactly there
    for (const p of people) expect(sentTo(p)).toHaveLength(1)
  })

  test('cancelled before its time, it never starts', async () => {
    const before = sends()
    const id = (await create({ scheduledAt: await inAnHour() })).body.id
    const cancelled = await s.api('POST', `/campaigns/${id}/cancel`, { key: dev.key })
    expect(cancelled.body.status).toBe('cancelled')
    await advance(2 * HOUR)
    expect((await get(id)).body).toMatchObject({ status: 'cancelled', startedAt: null })
    expect(sends()).toBe(before)
  })

  test('started by hand before its time, it starts now and not again at the time', async () => {
    const before = sends()
    const at = await inAnHour()
    const id = (await create({ scheduledAt: at })).body.id
    const started = await start(id)
    expect(started.status).toBe(200)
    expect(Date.parse(started.body.startedAt)).toBeLessThan(Date.parse(at))
    expect((await ended(id)).body.status).toBe('sent')
    await advance(2 * HOUR)
    const after = (await get(id)).body
    expect(after).toMatchObject({ status: 'sent', scheduledAt: at, startedAt: started.body.startedAt })
    expect(sends()).toBe(before + people.length)
  })

  test('scheduledAt must be an instant in the future, within 366 days (400 naming it); null means by hand', async () => {
    const past = new Date((await now()) - MIN).toISOString()
    const far = new Date((await now()) + 367 * 24 * HOUR).toISOString()
    for (const scheduledAt of [past, far, '2030-01-01', 'tomorrow', '2030-02-30T10:00:00Z']) {
      const r = await create({ scheduledAt })
      expect(r.status).toBe(400)
      expect(r.body.error).toStartWith('scheduledAt: ')
    }
    const manual = await create({ scheduledAt: null })
    expect(manual.status).toBe(201)
    expect(manual.body.scheduledAt).toBeNull()
    await s.api('POST', `/campaigns/${manual.body.id}/cancel`, { key: dev.key })
  })

  test('survives a restart: the durable timer starts it after the service came back', async () => {
    const at = await inAnHour()
    const id = (await create({ scheduledAt: at })).body.id
    await s.stop()
    s = await startTestServer(env, dir)
    expect((await get(id)).body.status).toBe('draft')
    await advance(HOUR)
    expect((await ended(id)).body.status).toBe('sent')
    for (const p of people) expect(sentTo(p)).toHaveLength(1) // the sandbox's memory is this process's
  })
})

describe('the agent must be published to start', () => {
  let other: { id: string; key: string }
  let draftOnly: string
  beforeAll(async () => {
    other = await s.developer({ plan: 'scale', name: 'Unpublished' })
    // Created and never published: it may not talk to anyone.
    draftOnly = (await s.api('POST', '/agents', { key: other.key, body: { name: 'Draft only' } })).body.id
    await broadcaster(other.id, draftOnly, '+14155558810')
  })

  test('a start by hand is 409 saying the agent is not published; the campaign stays a draft', async () => {
    const id = (await create({ agent: draftOnly }, other.id)).body.id
    const r = await s.console('POST', `/workspaces/${other.id}/campaigns/${id}/start`)
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('not published')
    expect((await s.api('GET', `/campaigns/${id}`, { key: other.key })).body.status).toBe('draft')
  })

  test('the scheduled start fails the campaign with lastError saying so, sends nothing, and tells the developer', async () => {
    const before = sends()
    const id = (await create({ agent: draftOnly, scheduledAt: await inAnHour() }, other.id)).body.id
    await advance(HOUR)
    const failed = await until(
      'failed',
      () => s.api('GET', `/campaigns/${id}`, { key: other.key }),
      (r) => r.body.status === 'failed',
    )
    expect(failed.body.lastError).toContain(`agent ${draftOnly} is not published`)
    expect(failed.body.counts.sent).toBe(0)
    expect(sends()).toBe(before)
    const notices = await until(
      'notified',
      async () => (await s.console('GET', `/workspaces/${other.id}/notifications`)).body.items as any[],
      (items) => items.some((n) => n.kind === 'campaign.failed'),
    )
    expect(notices.find((n) => n.kind === 'campaign.failed').body).toContain('not published')
  })

  test('a resume after the agent was unpublished is 409; published again, it resumes', async () => {
    const key = other.key
    const a = (await s.agent(key, { name: 'Will unpublish' })).id
    await s.console('PATCH', `/workspaces/${other.id}/phone-numbers/${encodeURIComponent('+14155558810')}`, { agent: a })
    const id = (await create({ agent: a }, other.id)).body.id
    expect((await s.console('POST', `/workspaces/${other.id}/campaigns/${id}/start`)).status).toBe(200)
    expect((await s.api('POST', `/campaigns/${id}/pause`, { key })).body.status).toBe('paused')
    expect((await legacy(`/agents/${a}/unpublish`, key)).status).toBe(200)
    const refused = await s.api('POST', `/campaigns/${id}/resume`, { key })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('not published')
    expect((await s.api('GET', `/campaigns/${id}`, { key })).body.status).toBe('paused')
    await s.publish(key, a)
    expect((await s.api('POST', `/campaigns/${id}/resume`, { key })).status).toBe(200)
    expect(
      (
        await until(
          'sent',
          () => s.api('GET', `/campaigns/${id}`, { key }),
          (r) => r.body.status === 'sent',
        )
      ).body.counts.sent,
    ).toBe(3)
  })
})
