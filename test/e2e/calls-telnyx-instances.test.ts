/**
 * Two instances on one Redis and one store, on a Telnyx line: a webhook Telnyx sends again (the
 * same event id, no 2xx in time) that lands on the other instance is taken once, its event id
 * claimed in the coordination store rather than remembered by the instance that first took it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTelnyxFake, type TelnyxFake } from '../fakes/telnyx'
import { type InstancePair, startInstancePair } from '../support/instances'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('a Telnyx webhook sent again to another instance', () => {
  let fake: TelnyxFake
  let pair: InstancePair
  beforeAll(async () => {
    fake = startTelnyxFake()
    pair = await startInstancePair({
      TELEPHONY_PROVIDER: 'telnyx',
      TELNYX_API_KEY: fake.apiKey,
      TELNYX_CONNECTION_ID: fake.connectionId,
      TELNYX_PUBLIC_KEY: fake.publicKey,
      TELNYX_API_BASE_URL: fake.url,
      // Webhooks are posted to each instance's own address below; the dial's webhook_url is not followed.
      PUBLIC_BASE_URL: 'http://127.0.0.1:9',
    })
  })
  afterAll(async () => {
    await pair?.stop()
    await fake?.stop()
  })

  test('is taken once: one answer, one stream command', async () => {
    const { a, b } = pair
    const dev = await a.developer({ plan: 'pro' })
    const agent = (await a.agent(dev.key, { name: 'Twice', voice: { answersCalls: true } })).id
    expect((await a.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155552700', source: 'rented', agent })).status).toBe(201)
    expect((await a.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155552701' })).status).toBe(201)
    const placed = await a.api('POST', '/calls', { key: dev.key, body: { to: '+14155552701', purpose: 'Hello.' } })
    expect(placed.status).toBe(202)
    const dialed = fake.calls.at(-1)!
    const eventId = 'a3f1c9e2-5b7d-4e08-9c61-2d4b8f0e7a15'
    const path = '/telephony/telnyx/events'
    expect(await fake.webhook(dialed.callControlId, 'call.answered', {}, { eventId, url: `${a.url}${path}` })).toBe(204)
    expect((await b.api('GET', `/calls/${placed.body.id}`, { key: dev.key })).body.status).toBe('connected')
    // The resend reaches B; its answer (204) comes once B has done whatever it does with it.
    expect(await fake.webhook(dialed.callControlId, 'call.answered', {}, { eventId, url: `${b.url}${path}` })).toBe(204)
    expect(dialed.actions.map((x) => x.action)).toEqual(['streaming_start'])
    // Another event of the call is still taken on B.
    expect(await fake.webhook(dialed.callControlId, 'call.hangup', { hangup_cause: 'normal_clearing' }, { url: `${b.url}${path}` })).toBe(204)
    await until(
      'completed',
      () => a.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.status === 'completed',
    )
  })
})
