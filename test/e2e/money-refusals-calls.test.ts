/**
 * Calls of a workspace that cannot pay a first minute, beyond POST /calls' own 402: a booked call
 * whose time comes is not placed (`failed`, `hangup: not_placed`, the 402's words in `error`); a
 * call coming in is answered only to say the line is not available, the reason in its `error`.
 * Each is a warn line too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { VOICE_LINES } from '../../src/voice/phrases'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const { logger, lines } = capturedLogger('warn')
let s: TestServer

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' }, undefined, logger)
})
afterAll(() => s?.stop())

const store = (name: string) => s.server.services.store.collection<any>({ name, indexes: [] })
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const now = async () => Date.parse((await s.console('GET', '/clock')).body.now)

/** A Pay-as-you-go workspace with an agent that answers calls on `prefix`0; `drain` rents three more numbers (6 USD of rent against the 5 USD credit). */
async function payg(name: string, prefix: string) {
  const dev = await s.developer({ plan: 'payg', name })
  const agent = (await s.agent(dev.key, { name, greeting: 'Hello, Bean There here.', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: `${prefix}0`, source: 'rented', agent })).status).toBe(201)
  const drain = async () => {
    for (let i = 1; i < 4; i++) expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: `${prefix}${i}`, source: 'rented' })).status).toBe(201)
    expect((await s.api('GET', '/usage', { key: dev.key })).body.wallet.availableMicro).toBe(-1_000_000)
  }
  return { dev, agent, drain }
}

test('a booked call whose time comes when the balance cannot pay is not placed; its error says why', async () => {
  const { dev, drain } = await payg('Booked', '+1415555930')
  const callee = '+14155559399'
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: callee })).status).toBe(201)
  const at = new Date((await now()) + 3_600 * SEC).toISOString()
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: callee, purpose: 'Your table is ready', scheduledFor: at } })
  expect(placed.status).toBe(202)
  expect(placed.body.status).toBe('scheduled')
  await drain()
  await advance(3_601 * SEC)
  const call = await until(
    'the booked call ends',
    () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
    (r) => r.body.status !== 'scheduled',
    15_000,
  )
  expect(call.body).toMatchObject({ status: 'failed', hangup: 'not_placed', seconds: 0 })
  expect(call.body.error).toStartWith('the balance cannot cover a call: -1000000 micro-units available')
  expect(lines.filter((l) => l.call === placed.body.id && l.msg === 'a waiting call was not placed: the account cannot pay for it')).toHaveLength(1)
})

test('a call coming in is told the line is not available; the reason is in its error and a warn line', async () => {
  const { dev, drain } = await payg('Incoming', '+1415555940')
  await drain()
  const from = '+14155559499'
  const rang = await s.console('POST', '/sandbox/calls', { from, to: '+14155559400', lines: ['Hello, can you help me?'], hangupAfterMs: 30 * SEC })
  expect(rang.status).toBe(201)
  const tries = await store('call_tries')
  const row = async () => (await tries.find({ direction: 'inbound', phone: from }))[0]
  await until('the line spoke', row, (r) => r?.transcript?.[0]?.text === VOICE_LINES.unavailable, 20_000)
  await advance(30 * SEC)
  const done = await until('the call ended', row, (r) => r?.status === 'completed' && r?.media === 'done', 20_000)
  expect(done.transcript.filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)).toEqual([VOICE_LINES.unavailable])
  expect(done.error).toStartWith('the balance cannot cover a call: -1000000 micro-units available')
  expect(lines.filter((l) => l.workspace === dev.id && l.msg === 'an incoming call was not taken: the account cannot pay for it')).toHaveLength(1)
})
