/**
 * Sequences end to end on the sandbox platform and the manual clock: the console creates one,
 * v1 lists it and enrols people under SPEC's rules, the clock runs its three steps, a reply stops
 * it, and a restart between steps sends nothing twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const HOUR = 60 * 60 * 1000
const dir = mkdtempSync(join(tmpdir(), 'svc-sequences-'))
const env = { CONSOLE_TOKEN: 'sequences-console-token-0123456789' }
let s: TestServer
let dev: { id: string; key: string }
let seq: string

beforeAll(async () => {
  s = await startTestServer(env, dir)
  dev = await s.developer({ plan: 'scale', name: 'Sequences' })
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Nurture' } })).body.id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550600', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/templates`, { name: 'welcome', language: 'en', category: 'utility', body: 'Welcome {{1}}!' })).status).toBe(201)
  for (const phone of ['+14155550601', '+14155550602', '+14155550603']) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550609', optedOut: true })).status).toBe(201)
  const made = await s.console('POST', `/workspaces/${dev.id}/sequences`, {
    name: 'Onboarding',
    agent,
    steps: [
      { template: 'welcome', delayMinutes: 0 },
      { template: 'welcome', delayMinutes: 60 },
      { template: 'welcome', delayMinutes: 60 },
    ],
  })
  expect(made.status).toBe(201)
  seq = made.body.id
  expect((await s.console('POST', `/workspaces/${dev.id}/sequences`, { name: 'Old', agent, status: 'archived', steps: [] })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/sequences`, { name: 'Empty', agent, steps: [] })).status).toBe(201)
})
afterAll(async () => {
  await s?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** Sequence steps sent to `to` (templates; the agent's own answers to a reply are text). */
const sent = (to: string) => s.server.services.of(messagingFeature).sandbox.sent.filter((m) => m.to === to && m.content.type === 'template')
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const enrol = (body: unknown, id = seq) => s.api('POST', `/sequences/${id}/enrolments`, { key: dev.key, body })
const enrolment = async (id: string) => (await s.server.services.store.collection<any>({ name: 'enrolments', indexes: [] })).get(id)
/** The enrolment waits for `step` (its deadline set), so moving the clock now is what wakes it. */
const waitingFor = (id: string, step: number) =>
  until(
    `waiting for step ${step + 1}`,
    () => enrolment(id),
    (e) => e.status === 'active' && e.step === step && e.nextAt !== null,
  )

describe('sequences', () => {
  test('GET /sequences lists active ones only', async () => {
    const items = (await s.api('GET', '/sequences', { key: dev.key })).body.items
    expect(items.map((x: any) => x.name)).toEqual(['Empty', 'Onboarding'])
    expect(items[1]).toMatchObject({ id: seq, status: 'active', exitOnReply: true })
  })

  test('the enrol rules: not errors for who cannot be enrolled; caps refused, not trimmed', async () => {
    expect((await enrol({ to: '+14155550699' })).body).toEqual({ enrolled: false, reason: 'not_a_contact' })
    expect((await enrol({ to: '+14155550609' })).body).toEqual({ enrolled: false, reason: 'opted_out' })
    const empty = (await s.api('GET', '/sequences', { key: dev.key })).body.items[0].id
    expect((await enrol({ to: '+14155550603' }, empty)).body).toEqual({ enrolled: false, reason: 'no_first_message' })
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`v${i}`, 'x']))
    expect((await enrol({ to: '+14155550603', variables: many })).status).toBe(400)
    expect((await enrol({ to: '+14155550603', variables: { name: 'x'.repeat(301) } })).body.error).toContain('300')
    expect((await enrol({ to: '+14155550603' }, 'seq_nope')).status).toBe(404)
  })

  test('three steps run by the clock; a reply stops the rest', async () => {
    const r = await enrol({ to: '+1 415 555 0601', variables: { '1': 'Priya' } })
    expect(r.body.enrolled).toBe(true)
    expect((await enrol({ to: '+14155550601' })).body).toEqual({ enrolled: false, reason: 'already_enrolled' })
    await advance(1_000)
    await until(
      'step 1',
      async () => sent('+14155550601'),
      (m) => m.length === 1,
    )
    expect(sent('+14155550601')[0]!.content).toEqual({ type: 'template', template: { name: 'welcome', language: 'en', variables: ['Priya'] } })
    await waitingFor(r.body.id, 1)
    await advance(HOUR)
    await until(
      'step 2',
      async () => sent('+14155550601'),
      (m) => m.length === 2,
    )
    expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550601', text: 'Thanks, got it' })).status).toBe(201)
    await until(
      'stopped',
      () => enrolment(r.body.id),
      (e) => e.status === 'stopped',
    )
    await advance(2 * HOUR)
    await Bun.sleep(100)
    expect(sent('+14155550601')).toHaveLength(2)
    expect(await enrolment(r.body.id)).toMatchObject({ stopReason: 'replied', steps: { '0': 'sent', '1': 'sent' } })
  })

  test('a restart between steps sends nothing twice and misses nothing', async () => {
    const r = await enrol({ to: '+14155550602', variables: { '1': 'Sam' } })
    await advance(1_000)
    await until(
      'step 1',
      async () => sent('+14155550602'),
      (m) => m.length === 1,
    )
    await waitingFor(r.body.id, 1)
    await s.stop()
    s = await startTestServer(env, dir)
    await advance(HOUR)
    await until(
      'step 2 after the restart',
      async () => sent('+14155550602'),
      (m) => m.length === 1,
    )
    await waitingFor(r.body.id, 2)
    await advance(HOUR)
    await until(
      'finished',
      () => enrolment(r.body.id),
      (e) => e.status === 'finished',
    )
    expect(sent('+14155550602')).toHaveLength(2) // steps 2 and 3 on this instance; step 1 went before the restart
    expect((await enrolment(r.body.id)).steps).toEqual({ '0': 'sent', '1': 'sent', '2': 'sent' })
    // Each message sent is metered once, at the template category's rate (utility).
    const usage = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    const charged = (await usage.find({ workspaceId: dev.id, kind: 'message', sequenceId: seq })).filter((u) => u.id.startsWith('use_msg_'))
    expect(charged).toHaveLength(5) // the two messages of the test above and these three, each once
    expect(charged.every((u) => u.category === 'utility' && u.costMicro === 4_000)).toBe(true) // USD utility rate (docs/api/billing.md)
  })
})
