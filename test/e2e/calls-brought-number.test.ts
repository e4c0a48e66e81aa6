/**
 * DELETE /calls/{id} and a brought number without carrier credentials (docs/spec.md: such a call
 * "cannot be ended and answers 409 saying so"). POST /calls refuses to place a call from such a
 * number, so the call here was booked from a rented number that was then released and brought
 * back without credentials: when it rings from that number, DELETE answers 409 with the call as
 * it stands, which goes on. A waiting call needs no carrier to be cancelled: 200.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CALL_KIND } from '../../machines/call'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const HOUR = 3_600_000
const NUMBER = '+14155553700'
let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.stop())

test('a booked call whose number became brought without carrier credentials: cancelled while waiting (200); 409 once it rings, and it goes on', async () => {
  const dev = await s.developer({ plan: 'pro', name: 'Brought' })
  const agent = (await s.agent(dev.key, { name: 'Ava', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: NUMBER, source: 'rented', agent })).status).toBe(201)
  for (const phone of ['+14155553701', '+14155553702']) {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })).status).toBe(200)
  }
  const at = new Date(Date.parse((await s.console('GET', '/clock')).body.now) + HOUR).toISOString()
  const book = async (to: string) => {
    const r = await s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'Your appointment', scheduledFor: at } })
    expect(r.status).toBe(202)
    return r.body.id as string
  }
  const waiting = await book('+14155553701')
  const ringing = await book('+14155553702')

  // The number is released and brought back, now without carrier credentials.
  expect((await s.console('DELETE', `/workspaces/${dev.id}/phone-numbers/${encodeURIComponent(NUMBER)}`)).status).toBe(204)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: NUMBER, source: 'brought', carrierCredentials: false, agent })).status).toBe(201)
  // A new call from it is refused, as docs/spec.md says.
  expect((await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155553701', purpose: 'Now' } })).status).toBe(409)

  const cancelled = await s.api('DELETE', `/calls/${waiting}`, { key: dev.key })
  expect(cancelled.status).toBe(200)
  expect(cancelled.body).toMatchObject({ id: waiting, status: 'cancelled' })

  await s.console('POST', '/clock/advance', { ms: HOUR })
  await until(
    'rings from the brought number',
    () => s.api('GET', `/calls/${ringing}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  const refused = await s.api('DELETE', `/calls/${ringing}`, { key: dev.key })
  expect(refused.status).toBe(409)
  expect(refused.body.error).toContain('carrier credentials')
  expect(refused.body.error).toContain(NUMBER)
  expect(refused.body.call).toMatchObject({ id: ringing, status: 'connected', from: NUMBER })
  // Not ended: it goes on. The refusal sent the call nothing, and the actor has settled with no
  // effect in flight, so nothing already under way can end it later.
  const settled = await s.server.services.runtime.settle(CALL_KIND, ringing)
  expect(settled.state).toBe('connected')
  expect((await s.api('GET', `/calls/${ringing}`, { key: dev.key })).body).toMatchObject({ status: 'connected', endedAt: null })
})
