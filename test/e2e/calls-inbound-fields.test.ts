/**
 * docs/spec.md Events rule 7 on inbound calls: fields are extracted only when someone will read them —
 * for an inbound call, when the agent has a v1 webhook subscribed to `call.analysed`. The same
 * caller says the same thing to three agents with the same `collectFields`; only the one with
 * such a webhook gets fields.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Inbound fields' })
})
afterAll(() => s?.stop())

const store = (name: string) => s.server.services.store.collection<any>({ name, indexes: [] })

/** An agent on `number` collecting the caller's name, with webhooks for `events` (none when empty). */
async function frontDesk(name: string, number: string, events: string[][]) {
  const agent = await s.agent(dev.key, {
    name,
    greeting: 'Hello, Bean There here.',
    voice: { answersCalls: true },
    collectFields: [{ name: 'name', type: 'text', description: "the caller's name" }],
  })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent: agent.id })).status).toBe(201)
  for (const [i, list] of events.entries())
    expect((await s.api('POST', '/webhooks', { key: dev.key, body: { agent: agent.id, url: `ops${i}-${agent.id}@example.com`, events: list } })).status).toBe(201)
  return agent.id as string
}

/** An inbound call to `to` where the caller gives their name; resolves with the analysed row. */
async function callIn(to: string, from: string) {
  const rang = await s.console('POST', '/sandbox/calls', { from, to, lines: ['My name is Priya.'], hangupAfterMs: 60 * SEC })
  expect(rang.body.answered).toBe(true)
  const tries = await store('call_tries')
  const [row] = await until(
    'the inbound row',
    () => tries.find({ workspaceId: dev.id, direction: 'inbound', phone: from }),
    (r) => r.length === 1,
  )
  // The caller said it and heard the answer; then the hang-up falls due.
  await until(
    'the name said and answered',
    async () => (await tries.get(row.id)).transcript,
    (t: any[]) => t.some((l) => l.speaker === 'customer') && t.at(-1).speaker === 'agent',
    30_000,
  )
  await s.console('POST', '/clock/advance', { ms: 61 * SEC })
  const done = await until(
    'analysed',
    () => tries.get(row.id),
    (r) => r.analysedAt !== null,
    30_000,
  )
  expect(done).toMatchObject({ status: 'completed', direction: 'inbound' })
  return done
}

test('no webhook, or one not subscribed to call.analysed: no fields; one subscribed to call.analysed: fields', async () => {
  await frontDesk('Unwatched', '+14155553600', [])
  await frontDesk('Other events', '+14155553610', [['call.completed', 'conversation.escalated']])
  await frontDesk('Watched', '+14155553620', [['call.analysed']])

  const unwatched = await callIn('+14155553600', '+14155553601')
  const other = await callIn('+14155553610', '+14155553611')
  const watched = await callIn('+14155553620', '+14155553621')

  expect(watched.fields).toEqual({ name: 'Priya' })
  expect(unwatched.fields).toEqual({})
  expect(other.fields).toEqual({})
  // The summary is written either way: only fields wait for a reader.
  for (const r of [unwatched, other, watched]) expect(r.summary).toBeString()
  // call.analysed carries the same: fields only for the watched agent (published after the row is written).
  const events = await store('events')
  const analysed = await until(
    'three call.analysed',
    () => events.find({ type: 'call.analysed', workspaceId: dev.id }),
    (e) => e.length === 3,
  )
  const fieldsOf = (callId: string) => analysed.find((e: any) => e.data?.id === callId)?.data.fields
  expect(fieldsOf(watched.callId)).toEqual({ name: 'Priya' })
  expect(fieldsOf(unwatched.callId)).toEqual({})
  expect(fieldsOf(other.callId)).toEqual({})
}, 120_000)
