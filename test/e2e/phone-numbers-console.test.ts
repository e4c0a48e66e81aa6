/**
 * A phone number's life in the console, end to end: PATCH reassigns (the agent's voice number
 * follows), detaches, relabels and switches external agents, naming a wrong field; DELETE releases
 * it (204): no longer listed or counted, a customer holding none can then be deleted, its rent
 * stops (held money and later months), a reply on its chat-app conversation is 409 "number
 * disconnected", and it is refused (409) while a call on it, out or in, is live.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { usageFeature } from '../../src/features/usage'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const DAY = 86_400_000
// A rented number's monthly rent in USD micro-units (docs/api/billing.md), stated rather than read from src.
const RENT = 1_500_000
let s: TestServer
let dev: { id: string; key: string }

const path = (number: string, ws = dev.id) => `/workspaces/${ws}/phone-numbers/${encodeURIComponent(number)}`
const add = (body: Record<string, unknown>, ws = dev.id) => s.console('POST', `/workspaces/${ws}/phone-numbers`, { source: 'rented', ...body })
const listed = async (key = dev.key, workspace?: string) => (await s.api('GET', '/phone-numbers', { key, workspace })).body.items.map((n: any) => n.number)
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const rentRecords = (developerId: string, number: string) => s.server.services.of(usageFeature).ledger.records.find({ developerId, kind: 'phone_rent', number })

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale', name: 'Numbers' })
})
afterAll(() => s?.stop())

describe('PATCH a number', () => {
  test('reassigns to another agent (its voice number follows), detaches with null, relabels, switches external agents', async () => {
    const a = await s.agent(dev.key, { name: 'Front desk', voice: { answersCalls: true } })
    const b = await s.agent(dev.key, { name: 'Night desk', voice: { answersCalls: true } })
    expect((await add({ number: '+14155558100', agent: a.id, label: 'Main' })).status).toBe(201)
    const voiceOf = async (id: string) => (await s.api('GET', `/agents/${id}`, { key: dev.key })).body.voice.phoneNumber

    const moved = await s.console('PATCH', path('+14155558100'), { agent: b.id })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ number: '+14155558100', agent: b.id, label: 'Main', source: 'rented', channel: 'voice', externalAgents: false })
    expect(await voiceOf(b.id)).toBe('+14155558100')
    expect(await voiceOf(a.id)).toBeNull()

    // Another spelling of the number in the path names the same number.
    const relabelled = await s.console('PATCH', path('14155558100'), { label: 'Reception', externalAgents: true })
    expect(relabelled.status).toBe(200)
    expect(relabelled.body).toMatchObject({ agent: b.id, label: 'Reception', externalAgents: true })

    const detached = await s.console('PATCH', path('+14155558100'), { agent: null })
    expect(detached.status).toBe(200)
    expect(detached.body.agent).toBeNull()
    expect(await voiceOf(b.id)).toBeNull()
    const v1 = (await s.api('GET', '/phone-numbers', { key: dev.key })).body.items.find((n: any) => n.number === '+14155558100')
    expect(v1).toMatchObject({ agent: null, label: 'Reception' })
  })

  test('an agent keeps showing its other voice number when one of two is detached', async () => {
    const a = await s.agent(dev.key, { name: 'Two lines', voice: { answersCalls: true } })
    await add({ number: '+14155558110', agent: a.id })
    await add({ number: '+14155558111', agent: a.id })
    expect((await s.api('GET', `/agents/${a.id}`, { key: dev.key })).body.voice.phoneNumber).toBe('+14155558111')
    expect((await s.console('PATCH', path('+14155558111'), { agent: null })).status).toBe(200)
    expect((await s.api('GET', `/agents/${a.id}`, { key: dev.key })).body.voice.phoneNumber).toBe('+14155558110')
  })

  test("a wrong agent is 400 naming agent; an unknown number, or another workspace's, is 404; an unknown member is 400", async () => {
    await add({ number: '+14155558120' })
    const other = await s.developer({ name: 'Other' })
    const theirs = await s.agent(other.key, { name: 'Theirs' })
    for (const agent of ['ag_nope', theirs.id]) {
      const r = await s.console('PATCH', path('+14155558120'), { agent })
      expect(r.status).toBe(400)
      expect(r.body.error).toStartWith('agent: ')
    }
    expect((await s.console('PATCH', path('+14155558199'), { label: 'x' })).status).toBe(404)
    expect((await s.console('PATCH', path('+14155558120', other.id), { label: 'x' })).status).toBe(404)
    expect((await s.console('PATCH', path('+14155558120'), { source: 'brought' })).status).toBe(400)
  })
})

describe('DELETE a number (release)', () => {
  test('204: no longer listed; the agent no longer shows it; the number can be added again', async () => {
    const a = await s.agent(dev.key, { name: 'Releaser', voice: { answersCalls: true } })
    await add({ number: '+14155558200', agent: a.id })
    expect(await listed()).toContain('+14155558200')
    const r = await s.console('DELETE', path('+14155558200'))
    expect(r.status).toBe(204)
    expect(await listed()).not.toContain('+14155558200')
    expect((await s.api('GET', `/agents/${a.id}`, { key: dev.key })).body.voice.phoneNumber).toBeNull()
    expect((await s.console('DELETE', path('+14155558200'))).status).toBe(404)
    // Released, it is nobody's: another workspace may take it.
    const other = await s.developer({ name: 'Taker' })
    expect((await add({ number: '+14155558200' }, other.id)).status).toBe(201)
  })

  test('a customer holding a number cannot be deleted (409); released, it is no longer counted and the delete goes through', async () => {
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id
    await add({ number: '+14155558210', channel: 'chatapp' }, customer)
    expect((await s.api('GET', `/customers/${customer}`, { key: dev.key })).body.counts.phoneNumbers).toBe(1)
    const refused = await s.api('DELETE', `/customers/${customer}`, { key: dev.key })
    expect(refused.status).toBe(409)
    expect(refused.body.numbers).toEqual(['+14155558210'])
    expect((await s.console('DELETE', path('+14155558210', customer))).status).toBe(204)
    expect((await s.api('GET', `/customers/${customer}`, { key: dev.key })).body.counts.phoneNumbers).toBe(0)
    expect(await listed(dev.key, customer)).toEqual([])
    expect((await s.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
  })

  test('rent stops: the released number is no longer held and no later month is charged; the kept one renews', async () => {
    const payer = await s.developer({ plan: 'payg', name: 'Renter' })
    await s.console('POST', `/workspaces/${payer.id}/wallet`, { creditMicro: 50_000_000 })
    await add({ number: '+14155558300' }, payer.id)
    await add({ number: '+14155558301' }, payer.id)
    await advance(25 * DAY)
    expect((await s.api('GET', '/usage', { key: payer.key })).body.wallet.heldMicro).toBe(2 * RENT)
    expect((await s.console('DELETE', path('+14155558300', payer.id))).status).toBe(204)
    const after = (await s.api('GET', '/usage', { key: payer.key })).body.wallet
    expect(after.heldMicro).toBe(RENT)
    expect(after.availableMicro).toBe(after.balanceMicro - RENT)
    await advance(10 * DAY) // past both numbers' monthly anniversary
    await s.api('GET', '/usage', { key: payer.key })
    expect(await rentRecords(payer.id, '+14155558300')).toHaveLength(1)
    expect(await rentRecords(payer.id, '+14155558301')).toHaveLength(2)
  })

  test('a month begun before the release is charged even when nobody looked at the money meanwhile', async () => {
    const payer = await s.developer({ plan: 'payg', name: 'Late look' })
    await add({ number: '+14155558310' }, payer.id)
    await advance(40 * DAY) // the second month began on day ~30; nothing read the wallet since
    expect((await s.console('DELETE', path('+14155558310', payer.id))).status).toBe(204)
    await advance(40 * DAY)
    expect((await s.api('GET', '/usage', { key: payer.key })).body.wallet.heldMicro).toBe(0)
    expect(await rentRecords(payer.id, '+14155558310')).toHaveLength(2)
  })

  test('a reply on a conversation of a released chat-app number is 409 "number disconnected"', async () => {
    const ext = await s.developer({ plan: 'scale', name: 'External' })
    const a = await s.agent(ext.key, { name: 'Ext' })
    await add({ number: '+14155558400', channel: 'chatapp', agent: a.id, externalAgents: true }, ext.id)
    const inbound = await s.console('POST', `/workspaces/${ext.id}/inbound`, { channel: 'chatapp', from: '+14155558401', to: '+14155558400', text: 'Hello?' })
    expect(inbound.status).toBe(201)
    const reply = () => s.api('POST', `/conversations/${inbound.body.conversationId}/reply`, { key: ext.key, body: { text: 'Hi!' } })
    expect((await reply()).status).toBe(200)
    expect((await s.console('DELETE', path('+14155558400', ext.id))).status).toBe(204)
    const refused = await reply()
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('number disconnected')
    expect(refused.body.error).toContain('+14155558400')
  })

  test('409 while an outbound call from the number is live; 204 once it ended', async () => {
    const a = await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })
    await add({ number: '+14155558500', agent: a.id })
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558501' })
    await s.console('PUT', `/sandbox/phones/${encodeURIComponent('+14155558501')}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 3_600_000 })
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558501', purpose: 'Confirm the booking', agent: a.id } })
    expect(placed.status).toBe(202)
    await until(
      'connected',
      () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
      10_000,
    )
    const refused = await s.console('DELETE', path('+14155558500'))
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain(placed.body.id)
    expect(await listed()).toContain('+14155558500')
    expect((await s.api('DELETE', `/calls/${placed.body.id}`, { key: dev.key })).status).toBe(202)
    await until(
      'ended',
      () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.status === 'completed',
      10_000,
    )
    expect((await s.console('DELETE', path('+14155558500'))).status).toBe(204)
  })

  test('409 while an inbound call to the number is live', async () => {
    const a = await s.agent(dev.key, { name: 'Answerer', voice: { answersCalls: true } })
    await add({ number: '+14155558600', agent: a.id })
    const rang = await s.console('POST', '/sandbox/calls', { from: '+14155558601', to: '+14155558600', lines: ['Hello, is anyone there?'], hangupAfterMs: 5_000 })
    expect(rang.status).toBe(201)
    const rows = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    await until(
      'the inbound call is connected',
      () => rows.findOne({ from: '+14155558600', direction: 'inbound' }),
      (r) => r?.status === 'connected',
      10_000,
    )
    const refused = await s.console('DELETE', path('+14155558600'))
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('live call')
    // The caller hangs up; then the number goes.
    await until(
      'the caller hung up',
      async () => {
        await advance(1_000)
        return rows.findOne({ from: '+14155558600', direction: 'inbound' })
      },
      (r) => r?.status === 'completed',
      20_000,
    )
    expect((await s.console('DELETE', path('+14155558600'))).status).toBe(204)
  })
})
