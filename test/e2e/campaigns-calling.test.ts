/**
 * Calling campaigns end to end through the running server, the sandbox phone network and the manual
 * clock: a 20-recipient campaign with answered and missed callees, the plan's call rate shared with
 * the API, and a workspace too small to run one. Chat-app broadcasts: campaigns-broadcast.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1000
const dir = mkdtempSync(join(tmpdir(), 'svc-campaigns-calling-'))
const env = { CONSOLE_TOKEN: 'campaigns-console-token-0123456789', CAMPAIGN_SEND_RATE: '50' }
let s: TestServer
let dev: { id: string; key: string }
let agent: string

const start = (id: string, ws = dev.id) => s.console('POST', `/workspaces/${ws}/campaigns/${id}/start`)
const get = (id: string, key = dev.key, workspace?: string) => s.api('GET', `/campaigns/${id}`, { key, workspace })
const events = async (type: string, id: string) => (await s.server.services.bus.events.find({ type })).filter((e: any) => e.data.id === id)

beforeAll(async () => {
  s = await startTestServer(env, dir)
  dev = await s.developer({ plan: 'scale', name: 'Campaigns' })
  agent = (await s.agent(dev.key, { name: 'Broadcaster', voice: { answersCalls: true } })).id
})
afterAll(async () => {
  await s?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('calling campaign', () => {
  test('20 recipients, answered and missed: each called once with the purpose; counts from the call outcomes', async () => {
    const voice = '+14155550790'
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: voice, source: 'rented', agent })).status).toBe(201)
    const answered = Array.from({ length: 12 }, (_, i) => `+1415558${String(1000 + i)}`)
    const missed = Array.from({ length: 6 }, (_, i) => `+1415558${String(2000 + i)}`)
    const dnc = '+14155583000'
    const stranger = '+14155583001'
    for (const phone of answered) {
      expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 5 * SEC })).status).toBe(200)
    }
    for (const phone of missed) {
      expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'no_answer', ringMs: 0 })).status).toBe(200)
    }
    const dncContact = (await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: dnc })).body.id
    expect((await s.console('PATCH', `/workspaces/${dev.id}/contacts/${dncContact}`, { doNotCall: true })).status).toBe(200)
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, {
      agent,
      name: 'Renewals',
      kind: 'voice',
      purpose: 'Your plan renews next week',
      recipients: [...answered, ...missed, dnc, stranger],
    })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ kind: 'voice', template: null, purpose: 'Your plan renews next week', counts: { recipients: 20 } })
    const c = made.body.id
    expect((await start(c)).body.status).toBe('sending')
    const listCalls = async () => (await s.api('GET', '/calls?limit=100', { key: dev.key })).body.items.filter((x: any) => x.reference === c)
    await until('every call placed', listCalls, (calls: any[]) => calls.length === 18)
    // The answered callees hang up after 5 s of service time.
    const done = await until(
      'campaign sent',
      async () => {
        await s.console('POST', '/clock/advance', { ms: 6 * SEC })
        return get(c)
      },
      (r) => r.body.status === 'sent',
    )
    expect(done.body.counts).toEqual({ recipients: 20, sent: 18, delivered: 12, read: 0, replied: 0, failed: 0, skipped: 2, voicemails: 0 })
    const calls = await listCalls()
    expect(calls.map((x: any) => x.phone).sort()).toEqual([...answered, ...missed].sort())
    expect(calls.filter((x: any) => x.status === 'completed')).toHaveLength(12)
    expect(calls.filter((x: any) => x.status === 'missed')).toHaveLength(6)
    const one = (await s.api('GET', `/calls/${calls[0].id}`, { key: dev.key })).body
    expect(one.metadata).toEqual({ campaign: c })
    expect((await events('campaign.finished', c)).map((e: any) => e.data.status)).toEqual(['sent'])
  })

  test('a campaign places at most half the plan’s calls a minute: the API keeps room to call', async () => {
    const free = await s.developer({ plan: 'free', name: 'Free caller' })
    const fAgent = (await s.agent(free.key, { name: 'Free bot', voice: { answersCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${free.id}/phone-numbers`, { number: '+14155550792', source: 'rented', agent: fAgent })).status).toBe(201)
    const people = Array.from({ length: 7 }, (_, i) => `+1415558${String(5000 + i)}`)
    for (const phone of [...people, '+14155585100']) {
      expect((await s.console('POST', `/workspaces/${free.id}/contacts`, { phone })).status).toBe(201)
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'no_answer', ringMs: 0 })).status).toBe(200)
    }
    const c = (await s.console('POST', `/workspaces/${free.id}/campaigns`, { agent: fAgent, name: 'Free run', kind: 'voice', purpose: 'Hello', recipients: people })).body.id
    await start(c, free.id)
    const placed = async () => (await s.api('GET', '/calls?limit=100', { key: free.key })).body.items.filter((x: any) => x.reference === c)
    // The free plan: 10 calls a minute, so 5 for campaigns.
    await until('five placed', placed, (calls: any[]) => calls.length === 5 && calls.every((x) => x.status === 'missed'))
    await Bun.sleep(300)
    expect(await placed()).toHaveLength(5)
    expect((await get(c, free.key)).body.status).toBe('sending')
    expect((await s.api('POST', '/calls', { key: free.key, body: { to: '+14155585100', purpose: 'Placed through the API' } })).status).toBe(202)
    await s.console('POST', '/clock/advance', { ms: 61 * SEC })
    const done = await until(
      'sent',
      () => get(c, free.key),
      (r) => r.body.status === 'sent',
    )
    expect(done.body.counts).toMatchObject({ recipients: 7, sent: 7, delivered: 0, failed: 0 })
  })

  test('a workspace with one call line cannot run a calling campaign (it would take every line)', async () => {
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Tiny' } })).body.id
    expect((await s.api('PATCH', `/customers/${customer}`, { key: dev.key, body: { allottedCallLines: 1 } })).status).toBe(200)
    const cAgent = (await s.agent(dev.key, { name: 'Tiny caller', voice: { answersCalls: true } }, customer)).id
    expect((await s.console('POST', `/workspaces/${customer}/phone-numbers`, { number: '+14155550791', source: 'rented', agent: cAgent })).status).toBe(201)
    const r = await s.console('POST', `/workspaces/${customer}/campaigns`, { agent: cAgent, name: 'Too big', kind: 'voice', purpose: 'Hello', recipients: ['+14155584000'] })
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('at least 2 call lines')
  })
})
