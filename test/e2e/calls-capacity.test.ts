/**
 * Admission control end to end (docs/production.md "Capacity"), with CALLS_MAX_LIVE=1: on Twilio
 * (its REST fake), a second call placed while the first rings is 503 with Retry-After and nothing
 * recorded, an incoming call hears busy TwiML, and /metrics and the workspace's quality count
 * both; on the sandbox, a calling campaign that meets the limit waits and calls every recipient
 * instead of failing them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { twilioSignature } from '../../src/providers/telephony/twilio-signature'
import type { TwilioFake } from '../fakes/twilio'
import { startTestServer, type TestServer } from '../support/server'
import { startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

const SEC = 1000

async function metric(s: TestServer, name: string): Promise<string[]> {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.consoleToken}` } })
  return (await res.text()).split('\n').filter((l) => l.startsWith(name))
}

describe('on Twilio, at CALLS_MAX_LIVE=1', () => {
  let twilio: TwilioServer
  let fake: TwilioFake
  let s: TestServer
  let key: string
  let ws: string

  beforeAll(async () => {
    twilio = await startTwilioServer({
      CALLS_MAX_LIVE: '1',
    })
    ;({ fake, s } = twilio)
    const dev = await s.developer({ plan: 'pro' })
    key = dev.key
    ws = dev.id
    const agent = (await s.agent(key, { name: 'Caller', voice: { answersCalls: true } })).id
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155551900', source: 'rented', agent })
    for (const phone of ['+14155551901', '+14155551902', '+14155551903']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
  })
  afterAll(async () => {
    await twilio?.stop()
  })

  test('a call past the limit is 503 with Retry-After, saying the instance is at capacity; nothing is placed or listed', async () => {
    const first = await s.api('POST', '/calls', { key, body: { to: '+14155551901', purpose: 'First' } })
    expect(first.body).toMatchObject({ status: 'ringing' })
    expect(first.status).toBe(202)
    const placedAtTwilio = fake.calls.length
    const second = await s.api('POST', '/calls', { key, body: { to: '+14155551902', purpose: 'Second' } })
    expect(second.status).toBe(503)
    expect(second.headers.get('retry-after')).toBe('5')
    expect(second.body.error).toContain('this instance is at capacity')
    expect(second.body.error).toContain('CALLS_MAX_LIVE 1')
    expect(second.body.reason).toBe('calls')
    expect(fake.calls.length).toBe(placedAtTwilio)
    const listed = (await s.api('GET', '/calls?limit=100', { key })).body.items
    expect(listed.map((c: { id: string }) => c.id)).toEqual([first.body.id])
  })

  test('an incoming call at capacity hears busy: <Reject reason="busy"/>', async () => {
    const url = `${s.url}/telephony/twilio/voice`
    const params = { CallSid: 'CA00000000000000000000000000000001', AccountSid: fake.accountSid, From: '+14155551988', To: '+14155551900', CallStatus: 'ringing', Direction: 'inbound' }
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(fake.authToken, url, params) },
      body: new URLSearchParams(params),
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('<Reject reason="busy"/>')
    // Counted for the workspace holding the number rung, beside the call placed past the limit.
    expect((await s.console('GET', `/workspaces/${ws}/quality`)).body.overall.refused).toMatchObject({ outbound: 1, inbound: 1 })
  })

  test('a booked call due while the instance is full waits for room instead of failing, then rings', async () => {
    const now = Date.parse((await s.console('GET', '/clock')).body.now)
    const booked = await s.api('POST', '/calls', { key, body: { to: '+14155551903', purpose: 'Booked', scheduledFor: new Date(now + 60_000).toISOString() } })
    expect(booked.status).toBe(202)
    const before = fake.calls.length
    await s.console('POST', '/clock/advance', { ms: 61_000 })
    await Bun.sleep(2_500)
    // Due, but the first call holds the only room: not dialled, not failed.
    expect(fake.calls.length).toBe(before)
    expect((await s.api('GET', `/calls/${booked.body.id}`, { key })).body.status).toBe('ringing')
    // The first call ends at Twilio: the booked one rings.
    const firstSid = fake.calls[0]!.sid
    expect(await fake.callback(firstSid, { CallStatus: 'no-answer' })).toBe(204)
    await until(
      'the booked call dialled',
      async () => fake.calls.length,
      (n) => n === before + 1,
    )
    expect(fake.calls.at(-1)!.form.get('To')).toBe('+14155551903')
  }, 30_000)

  test('/metrics counts the admitted and the refused, by direction and signal', async () => {
    expect(await metric(s, 'agent_platform_calls_admitted_total{')).toContain('agent_platform_calls_admitted_total{direction="outbound"} 2')
    const refused = await metric(s, 'agent_platform_calls_refused_total{')
    expect(refused.find((l) => l.includes('direction="outbound",reason="calls"'))).toMatch(/ [1-9]\d*$/)
    expect(refused).toContain('agent_platform_calls_refused_total{direction="inbound",reason="calls"} 1')
  })
})

describe('on the sandbox, at CALLS_MAX_LIVE=1', () => {
  let s: TestServer

  beforeAll(async () => {
    s = await startTestServer({ CONSOLE_TOKEN: 'capacity-console-token-0123456789', CALLS_MAX_LIVE: '1' })
  })
  afterAll(() => s?.stop())

  test('a calling campaign that meets capacity waits: every recipient is called, none failed', async () => {
    const dev = await s.developer({ plan: 'scale' })
    const agent = (await s.agent(dev.key, { name: 'Broadcaster', voice: { answersCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155552790', source: 'rented', agent })).status).toBe(201)
    const people = ['+14155552001', '+14155552002', '+14155552003']
    for (const phone of people) {
      expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 5 * SEC })).status).toBe(200)
    }
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, { agent, name: 'One line', kind: 'voice', purpose: 'Your plan renews', recipients: people })
    expect(made.status).toBe(201)
    const c = made.body.id
    expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${c}/start`)).body.status).toBe('sending')
    const calls = async () => (await s.api('GET', '/calls?limit=100', { key: dev.key })).body.items.filter((x: { reference: string }) => x.reference === c)
    await until('the first call placed', calls, (list: unknown[]) => list.length === 1)
    // The one call holds the instance's only room: the next recipient waits for it.
    await Bun.sleep(1_500)
    expect(await calls()).toHaveLength(1)
    expect((await metric(s, 'agent_platform_calls_refused_total{direction="outbound",reason="calls"}')).length).toBe(1)
    const done = await until(
      'campaign sent',
      async () => {
        await s.console('POST', '/clock/advance', { ms: 6 * SEC })
        return s.api('GET', `/campaigns/${c}`, { key: dev.key })
      },
      (r) => r.body.status === 'sent',
    )
    expect(done.body.counts).toMatchObject({ recipients: 3, sent: 3, failed: 0 })
    expect((await calls()).map((x: { phone: string }) => x.phone).sort()).toEqual(people)
  }, 60_000)

  test("an incoming call at capacity is the sandbox's busy: rung, not answered", async () => {
    const dev = await s.developer({ plan: 'pro' })
    const agent = (await s.agent(dev.key, { name: 'Desk', voice: { answersCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155552800', source: 'rented', agent })).status).toBe(201)
    const first = await s.console('POST', '/sandbox/calls', { from: '+14155552899', to: '+14155552800', hangupAfterMs: null })
    expect(first.body.answered).toBe(true)
    const second = await s.console('POST', '/sandbox/calls', { from: '+14155552898', to: '+14155552800', hangupAfterMs: null })
    expect(second.status).toBe(201)
    expect(second.body.answered).toBe(false)
    expect((await metric(s, 'agent_platform_calls_refused_total{direction="inbound",reason="calls"}')).length).toBe(1)
  })
})

describe("a browser's call, at CALLS_MAX_LIVE=1", () => {
  let s: TestServer

  beforeAll(async () => {
    s = await startTestServer({ CALLS_MAX_LIVE: '1' })
  })
  afterAll(() => s?.stop())

  test("the widget's call past the limit is 503 with Retry-After, saying the instance is at capacity; no call is made", async () => {
    const dev = await s.developer({ plan: 'scale' })
    const agent = await s.agent(dev.key, { name: 'Desk', voice: { answersCalls: true } })
    const session = async () => (await s.api('POST', `/web/${agent.webKey}/sessions`, { body: {} })).body.session as string
    const first = await s.api('POST', `/web/${agent.webKey}/calls`, { body: { session: await session() } })
    expect(first.status).toBe(201)
    // The first call holds the only room until its browser connects (or its ring time runs out).
    const second = await s.api('POST', `/web/${agent.webKey}/calls`, { body: { session: await session() } })
    expect(second.status).toBe(503)
    expect(second.headers.get('retry-after')).toBe('5')
    expect(second.body.error).toContain('this instance is at capacity')
    expect(second.body.error).toContain('CALLS_MAX_LIVE 1')
    expect(second.body.reason).toBe('calls')
    const listed = (await s.api('GET', '/calls?limit=100', { key: dev.key })).body.items
    expect(listed.map((c: { id: string }) => c.id)).toEqual([first.body.callId])
    expect(await metric(s, 'agent_platform_calls_admitted_total{direction="web"}')).toEqual(['agent_platform_calls_admitted_total{direction="web"} 1'])
    expect(await metric(s, 'agent_platform_calls_refused_total{direction="web",reason="calls"}')).toEqual(['agent_platform_calls_refused_total{direction="web",reason="calls"} 1'])

    // The widget's own scripts (as the page loads them) tell the visitor, in the agent's language.
    const window: Record<string, any> = {}
    const script = async (name: string) => new Function('window', 'location', await (await fetch(`${s.url}/web/${name}`)).text())(window, { search: '' })
    await script('i18n.js')
    await script('voice.js')
    const shown: string[] = []
    let click = () => {}
    const button = {
      setAttribute() {},
      textContent: '',
      addEventListener: (_: string, f: () => void) => {
        click = f
      },
    }
    const visitor = await session()
    for (const [language, words] of [
      ['en', 'All our lines are busy right now; please try again in 5 seconds.'],
      ['es', 'Todas nuestras líneas están ocupadas; inténtalo de nuevo en 5 segundos.'],
    ]) {
      window.AgentVoice.attach({ button, api: `${s.url}/api/v1/web/${agent.webKey}`, session: () => visitor, status: (m: string) => shown.push(m), t: window.AgentWidgetText(language).t })
      click()
      await until(
        'the visitor told',
        async () => shown.at(-1),
        (m) => !!m,
      )
      expect(shown.at(-1)).toEndWith(words!)
    }
  })
})
