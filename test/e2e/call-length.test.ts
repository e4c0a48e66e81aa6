/**
 * `voice.maxCallSeconds: null` is the plan's default call length (docs/spec.md: "or `null` for the plan
 * default"), from one per-plan table; a value on the agent wins. Read from what the call's
 * pipeline was given (its `pipeline` record), since the limit itself runs on the call's audio time.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CALL_CEILINGS } from '../../src/catalog/limits'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
})
afterAll(() => s?.stop())

let n = 0
/** Places a call on `plan` with the agent's `maxCallSeconds`; answers the length its pipeline was given. */
async function lengthOfCall(plan: string, maxCallSeconds: number | null): Promise<number> {
  n++
  const dev = await s.developer({ plan, name: `Length ${n}` })
  const agent = await s.agent(dev.key, { name: 'Timed', voice: { answersCalls: true, maxCallSeconds } })
  const own = `+1415555${6100 + n}`
  const callee = `+1415555${6200 + n}`
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: own, source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: callee })).status).toBe(201)
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent(callee)}`, { pickup: 'answer', ringMs: 0 })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: callee, purpose: 'How long may this last?' } })
  expect(placed.status).toBe(202)
  const tries = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
  const row = await until(
    'the media started',
    async () => (await tries.find({ callId: placed.body.id }))[0],
    (r) => r?.pipeline !== undefined,
  )
  await s.api('DELETE', `/calls/${placed.body.id}`, { key: dev.key })
  return row.pipeline.maxCallSeconds
}

test('null is the plan default, per plan', async () => {
  expect(await lengthOfCall('free', null)).toBe(300)
  expect(await lengthOfCall('payg', null)).toBe(600)
  expect(await lengthOfCall('scale', null)).toBe(900)
  expect(await lengthOfCall('enterprise', null)).toBe(1_200)
  for (const plan of ['free', 'payg', 'pro', 'scale', 'enterprise'] as const) {
    const d = CALL_CEILINGS[plan].defaultCallSeconds
    expect(d >= 60 && d <= 1_200).toBe(true)
  }
})

test("the agent's own maxCallSeconds wins over the plan's", async () => {
  expect(await lengthOfCall('enterprise', 120)).toBe(120)
})
