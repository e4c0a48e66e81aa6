/**
 * The console's agents routes call the same services as the API: a draft edit is refused with the
 * v1 400 naming the member, versions name the panels they changed, diff / rollback / unpublish
 * move the same publication, and test chat talks to the draft.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let agent: string
const path = (p = '') => `/workspaces/${dev.id}/agents/${agent}${p}`

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  // Made, not published: the console's own publish is the first.
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bean There', instructions: 'Version one.' } })).body.id
})
afterAll(() => s?.stop())

test('the list names each agent with its published version, numbers and calls today', async () => {
  const r = await s.console('GET', `/workspaces/${dev.id}/agents`)
  expect(r.status).toBe(200)
  expect(r.body.items).toEqual([expect.objectContaining({ id: agent, name: 'Bean There', status: 'draft', publishedVersion: null, numbers: [], callsToday: 0 })])
})

test('calls today counts the agent’s calls since the workspace’s midnight, its numbers listed', async () => {
  const caller = (await s.agent(dev.key, { name: 'Ring Ring', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550800', source: 'rented', agent: caller })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550801' })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent('+14155550801')}`, { pickup: 'no_answer', ringMs: 0 })).status).toBe(200)
  expect((await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550801', agent: caller, purpose: 'Hi from Ring Ring.' } })).status).toBe(202)
  const rows = (await s.console('GET', `/workspaces/${dev.id}/agents`)).body.items
  expect(rows.find((a: any) => a.id === caller)).toMatchObject({ status: 'published', publishedVersion: 1, numbers: ['+14155550800'], callsToday: 1 })
  expect(rows.find((a: any) => a.id === agent)).toMatchObject({ callsToday: 0 })
  // Tomorrow, on the service clock, it is a new day.
  await s.console('POST', '/clock/advance', { ms: 24 * 3600 * 1000 })
  expect((await s.console('GET', `/workspaces/${dev.id}/agents`)).body.items.find((a: any) => a.id === caller).callsToday).toBe(0)
})

test('an edit out of bounds is the API’s 400 naming the member, and the draft is unchanged', async () => {
  const bad = await s.console('PATCH', path(), { voice: { patience: { waitMs: 50 } } })
  const api = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { patience: { waitMs: 50 } } } })
  expect(bad.status).toBe(400)
  expect(bad.body.error).toBe(api.body.error)
  expect(bad.body.error).toContain('voice.patience.waitMs')
  const ok = await s.console('PATCH', path(), { voice: { speed: 1.1 } })
  expect(ok.status).toBe(200)
  expect(ok.body.voice.speed).toBe(1.1)
  expect(ok.body.voice.patience.waitMs).toBeNull()
})

test('publish, edit, publish: versions name what changed; diff, rollback and unpublish move the same publication', async () => {
  expect((await s.console('POST', path('/unpublish'))).status).toBe(409)
  expect((await s.console('POST', path('/publish'), {})).status).toBe(200)
  expect((await s.console('PATCH', path(), { instructions: 'Version two.' })).status).toBe(200)
  const draft = await s.console('GET', path('/diff-draft'))
  expect(draft.body.changes['core.instructions']).toEqual({ old: 'Version one.', new: 'Version two.' })
  expect((await s.console('POST', path('/publish'), { changeSummary: 'clearer' })).body).toMatchObject({ number: 2, createdBy: 'console' })
  const list = await s.console('GET', path('/versions'))
  expect(list.body.status).toMatchObject({ status: 'published', publishedVersion: 2, hasUnpublishedChanges: false })
  expect(list.body.versions.map((v: any) => [v.number, v.changedFields])).toEqual([
    [2, ['core']],
    [1, null],
  ])
  expect((await s.console('GET', path('/versions/1/diff/2'))).body.changes['core.instructions']).toEqual({ old: 'Version one.', new: 'Version two.' })
  const back = await s.console('POST', path('/versions/1/rollback'))
  expect(back.body).toEqual({ target: 1, backup: 3, published: 4 })
  expect((await s.api('GET', `/agents/${agent}`, { key: dev.key })).body.instructions).toBe('Version one.')
  expect((await s.console('POST', path('/unpublish'))).status).toBe(200)
  expect((await s.console('GET', path('/versions'))).body.status.status).toBe('draft')
})

test('test chat answers from the draft; a blank message is the API’s 400', async () => {
  const blank = await s.console('POST', path('/test-chat'), { message: '' })
  expect(blank.status).toBe(400)
  expect(blank.body.error).toContain('message')
  const r = await s.console('POST', path('/test-chat'), { message: 'Are you open today?' })
  expect(r.status).toBe(200)
  expect(typeof r.body.reply).toBe('string')
})
