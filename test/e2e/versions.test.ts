/**
 * Agent versions over HTTP on the legacy surface (docs/spec.md "Agent versions (legacy)"): the whole
 * life of one agent in order — publish, edit, republish, checkpoint, diffs, rollback, promote,
 * unpublish — then tenancy, keys, validation, rate-limit headers, races and a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { versionsFeature } from '../../src/features/versions'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let ws: string
let key: string
let keyId: string
let readKey: string
let other: { id: string; key: string }
let agent: any
let otherAgent: any
/** Set once the server was restarted on its data dir, which stop() then no longer removes. */
let keptDir: string | null = null

interface Answer {
  status: number
  body: any
  headers: Headers
}

async function legacy(method: string, path: string, opts: { key?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(s.url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers }
}

const as = (k: string) => ({
  get: (path: string) => legacy('GET', path, { key: k }),
  post: (path: string, body?: unknown) => legacy('POST', path, { key: k, body }),
})
const api = () => as(key)
const serving = () => s.server.services.of(versionsFeature).serving.servingAgent(ws, agent.id)
const patch = async (body: unknown) => {
  const r = await s.api('PATCH', `/agents/${agent.id}`, { key, body })
  expect(r.status).toBe(200)
  return r.body
}
const versionsOf = async (id = agent.id) => (await api().get(`/agents/${id}/versions`)).body.versions as any[]

beforeAll(async () => {
  s = await startTestServer()
  const dev = await s.developer({ plan: 'scale' })
  ws = dev.id
  const issued = await s.console('POST', `/workspaces/${ws}/keys`, { name: 'versions', scope: 'build' })
  key = issued.body.key
  keyId = issued.body.id
  readKey = (await s.console('POST', `/workspaces/${ws}/keys`, { name: 'reader', scope: 'read' })).body.key
  other = await s.developer({ name: 'Other' })
  agent = (await s.api('POST', '/agents', { key, body: { name: 'Ava', instructions: 'Version one instructions.' } })).body
  otherAgent = (await s.api('POST', '/agents', { key: other.key, body: { name: 'Bea' } })).body
})
afterAll(async () => {
  await s?.stop()
  if (keptDir) rmSync(keptDir, { recursive: true, force: true })
})

describe('agent versions, in the order an agent lives them', () => {
  test('a new agent is draft only: nothing served, nothing to unpublish or compare', async () => {
    expect((await api().get(`/agents/${agent.id}/status`)).body).toEqual({
      agent_id: 1,
      status: 'draft',
      published_version_id: null,
      last_published_at: null,
      // Nothing is published: the whole draft is unpublished.
      has_unpublished_changes: true,
      changed_fields: ['core', 'tools', 'knowledge', 'voice', 'widget', 'workflow', 'dataCollection'],
    })
    expect(await versionsOf()).toEqual([])
    await expect(serving()).rejects.toMatchObject({ name: 'Refused', reason: 'conflict' })
    const unpublish = await api().post(`/agents/${agent.id}/unpublish`)
    expect(unpublish.status).toBe(409)
    expect(unpublish.body).toEqual({ detail: expect.stringContaining('draft'), status: 409 })
    const diff = await api().get(`/agents/${agent.id}/diff-draft`)
    expect(diff.status).toBe(409)
    expect(diff.body.detail).toContain('draft')
  })

  test('publish freezes version 1 and serves it', async () => {
    const r = await api().post(`/agents/${agent.id}/publish`, {})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ success: true, status: 'published', version_id: 1, version_number: 1, version_label: 'v1' })
    const status = (await api().get(`/agents/${agent.id}/status`)).body
    expect(status).toMatchObject({ status: 'published', published_version_id: 1, has_unpublished_changes: false, changed_fields: [] })
    expect(status.last_published_at).toBe(new Date(s.server.services.clock.now()).toISOString()) // the clock has not moved
    const [v1] = await versionsOf()
    expect(v1).toEqual({
      id: 1,
      version_number: 1,
      version_label: 'v1',
      name: 'Ava',
      environment: 'production',
      is_active: true,
      created_by: keyId,
      created_at: expect.any(String),
      change_summary: null,
    })
    expect((await serving()).instructions).toBe('Version one instructions.')
  })

  test('an edit makes unpublished changes, by panel; live conversations keep the published snapshot', async () => {
    await patch({ instructions: 'Version two instructions.', voice: { recordCalls: true } })
    expect((await api().get(`/agents/${agent.id}/status`)).body).toMatchObject({
      status: 'published',
      published_version_id: 1,
      has_unpublished_changes: true,
      changed_fields: ['core', 'voice'],
    })
    const served = await serving()
    expect(served.instructions).toBe('Version one instructions.')
    expect(served.voice.recordCalls).toBe(false)
    // The chart itself moved too (not only the computed answer).
    expect((await s.server.services.runtime.read('agentPublication', agent.id))?.state).toBe('publishedWithChanges')
    const diff = (await api().get(`/agents/${agent.id}/diff-draft`)).body
    expect(diff).toMatchObject({ version_a: { id: 1, version_number: 1 }, version_b: { id: null, version_number: null }, has_changes: true, changed_fields: ['core', 'voice'] })
    expect(diff.changes['core.instructions']).toEqual({ old: 'Version one instructions.', new: 'Version two instructions.' })
    expect(diff.changes['voice.recordCalls']).toEqual({ old: false, new: true })
  })

  test('an edit back to the published values clears the changes', async () => {
    await patch({ voice: { recordCalls: false } })
    expect((await api().get(`/agents/${agent.id}/status`)).body.changed_fields).toEqual(['core'])
    await patch({ voice: { recordCalls: true } })
  })

  test('publishing again makes version 2 live', async () => {
    const r = await api().post(`/agents/${agent.id}/publish`, { change_summary: 'new instructions' })
    expect(r.body).toMatchObject({ version_id: 2, version_label: 'v2' })
    expect((await api().get(`/agents/${agent.id}/status`)).body).toMatchObject({ published_version_id: 2, has_unpublished_changes: false, changed_fields: [] })
    const list = await versionsOf()
    expect(list.map((v) => [v.id, v.is_active, v.change_summary])).toEqual([
      [2, true, 'new instructions'],
      [1, false, null],
    ])
    expect((await serving()).instructions).toBe('Version two instructions.')
  })

  test('a checkpoint stores a labelled version in its environment and changes nothing else', async () => {
    const r = await api().post(`/agents/${agent.id}/versions`, { change_summary: 'safe point', version_label: 'before launch', environment: 'staging' })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: 3, version_number: 3, version_label: 'before launch', environment: 'staging', is_active: false, change_summary: 'safe point' })
    expect(r.body.snapshot).toBeUndefined()
    expect((await api().get(`/agents/${agent.id}/status`)).body).toMatchObject({ status: 'published', published_version_id: 2 })
    const read = await api().get(`/agents/${agent.id}/versions/3`)
    expect(read.body).toMatchObject({ id: 3, version_label: 'before launch' })
    expect(Object.keys(read.body.snapshot)).toEqual(['core', 'tools', 'knowledge', 'voice', 'widget', 'workflow', 'dataCollection'])
    expect(read.body.snapshot.core).toMatchObject({ name: 'Ava', instructions: 'Version two instructions.' })
    expect(read.body.snapshot.voice.recordCalls).toBe(true)
  })

  test('diff between versions, field by field', async () => {
    const d = (await api().get(`/agents/${agent.id}/versions/1/diff/2`)).body
    expect(d.version_a).toEqual({ id: 1, version_number: 1 })
    expect(d.version_b).toEqual({ id: 2, version_number: 2 })
    expect(d.has_changes).toBe(true)
    expect(d.changes['core.instructions']).toEqual({ old: 'Version one instructions.', new: 'Version two instructions.' })
    expect((await api().get(`/agents/${agent.id}/versions/2/diff/3`)).body).toMatchObject({ changes: {}, has_changes: false })
  })

  test('rollback: a backup first, the target restored onto the agent, then a new published version', async () => {
    await patch({ greeting: 'Unsaved greeting' })
    const r = await api().post(`/agents/${agent.id}/versions/1/rollback`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ success: true, agent_id: 1, backup_version_id: 4, version_id: 5 })
    expect(r.body.message).toContain('v1')
    const list = await versionsOf()
    expect(list.map((v) => [v.id, v.is_active])).toEqual([
      [5, true],
      [4, false],
      [3, false],
      [2, false],
      [1, false],
    ])
    const backup = (await api().get(`/agents/${agent.id}/versions/4`)).body
    expect(backup.snapshot.core.greeting).toBe('Unsaved greeting')
    expect(backup.change_summary).toContain('v1')
    const v1 = (await api().get(`/agents/${agent.id}/versions/1`)).body.snapshot
    const now = (await s.api('GET', `/agents/${agent.id}`, { key })).body
    expect(now.instructions).toBe(v1.core.instructions)
    expect(now.greeting).toBe(v1.core.greeting)
    expect(now.voice.recordCalls).toBe(v1.voice.recordCalls)
    expect((await api().get(`/agents/${agent.id}/versions/1/diff/5`)).body.has_changes).toBe(false)
    expect((await api().get(`/agents/${agent.id}/status`)).body).toMatchObject({ published_version_id: 5, has_unpublished_changes: false })
    expect((await serving()).instructions).toBe('Version one instructions.')
  })

  test('promote runs development → staging → production, one step at a time', async () => {
    const dev = (await api().post(`/agents/${agent.id}/versions`, { version_label: 'next' })).body
    expect(dev).toMatchObject({ id: 6, environment: 'development', version_label: 'next' })
    const skip = await api().post(`/agents/${agent.id}/versions/6/promote`, { version_id: 6, target_environment: 'production' })
    expect(skip.status).toBe(409)
    expect(skip.body.detail).toContain('development')
    const mismatch = await api().post(`/agents/${agent.id}/versions/6/promote`, { version_id: 5, target_environment: 'staging' })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body).toEqual({ detail: expect.stringContaining('version_id'), status: 400 })
    const toStaging = await api().post(`/agents/${agent.id}/versions/6/promote`, { version_id: 6, target_environment: 'staging' })
    expect(toStaging.body).toMatchObject({ id: 6, environment: 'staging' })
    const back = await api().post(`/agents/${agent.id}/versions/6/promote`, { target_environment: 'development' })
    expect(back.status).toBe(409)
    expect(back.body.detail).toContain('staging')
    expect((await api().post(`/agents/${agent.id}/versions/6/promote`, { target_environment: 'production' })).body.environment).toBe('production')
    const further = await api().post(`/agents/${agent.id}/versions/6/promote`, { target_environment: 'production' })
    expect(further.status).toBe(409)
    expect(further.body.detail).toContain('production')
  })

  test('unpublish: nothing is served any more; a second unpublish is refused naming draft', async () => {
    const r = await api().post(`/agents/${agent.id}/unpublish`)
    expect(r.body).toEqual({ success: true, status: 'draft', agent_id: 1 })
    expect((await api().get(`/agents/${agent.id}/status`)).body).toMatchObject({ status: 'draft', published_version_id: null, has_unpublished_changes: true })
    await expect(serving()).rejects.toMatchObject({ name: 'Refused', reason: 'conflict', message: expect.stringContaining('not published') })
    expect((await versionsOf()).every((v) => !v.is_active)).toBe(true)
    const again = await api().post(`/agents/${agent.id}/unpublish`)
    expect(again.status).toBe(409)
    expect(again.body.detail).toContain('draft')
  })

  test('test chat still talks to the draft of an unpublished agent', async () => {
    const r = await s.api('POST', `/agents/${agent.id}/test-chat`, { key, body: { message: 'Hello' } })
    expect(r.status).toBe(200)
  })
})

describe('agent versions: tenancy, keys, validation, headers', () => {
  const routes = (id: string): [string, string, unknown?][] => [
    ['POST', `/agents/${id}/publish`, {}],
    ['POST', `/agents/${id}/unpublish`],
    ['GET', `/agents/${id}/status`],
    ['GET', `/agents/${id}/versions`],
    ['POST', `/agents/${id}/versions`, {}],
    ['GET', `/agents/${id}/versions/1`],
    ['POST', `/agents/${id}/versions/1/rollback`],
    ['POST', `/agents/${id}/versions/1/promote`, { target_environment: 'staging' }],
    ['GET', `/agents/${id}/versions/1/diff/2`],
    ['GET', `/agents/${id}/diff-draft`],
  ]

  test("another workspace's agent is a 404 in the legacy shape on every route, both ways", async () => {
    await legacy('POST', `/agents/${otherAgent.id}/publish`, { key: other.key, body: {} })
    for (const [method, path, body] of routes(otherAgent.id)) {
      const r = await legacy(method, path, { key, body })
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 404, body: { detail: expect.any(String), status: 404 } })
    }
    for (const [method, path, body] of routes(agent.id)) {
      const r = await legacy(method, path, { key: other.key, body })
      expect({ path, status: r.status }).toEqual({ path, status: 404 })
    }
    expect((await legacy('GET', `/agents/${otherAgent.id}/status`, { key: other.key })).body.status).toBe('published')
  })

  test('a version that does not exist is 404; a version id that is not a number is 422', async () => {
    expect((await api().get(`/agents/${agent.id}/versions/99`)).body).toEqual({ detail: expect.stringContaining('99'), status: 404 })
    expect((await api().post(`/agents/${agent.id}/versions/99/rollback`)).status).toBe(404)
    const bad = await api().get(`/agents/${agent.id}/versions/abc`)
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0]).toMatchObject({ loc: ['path', 'vid'], msg: expect.any(String), type: expect.any(String) })
  })

  test('bodies are validated with 422 naming the member', async () => {
    const env = await api().post(`/agents/${agent.id}/versions`, { environment: 'prod' })
    expect(env.status).toBe(422)
    expect(env.body.detail[0].loc).toEqual(['body', 'environment'])
    const extra = await api().post(`/agents/${agent.id}/publish`, { summary: 'x' })
    expect(extra.status).toBe(422)
    expect(extra.body.detail[0]).toMatchObject({ loc: ['body', 'summary'], type: 'extra_forbidden' })
    expect((await api().post(`/agents/${agent.id}/versions/1/promote`, {})).body.detail[0].loc).toEqual(['body', 'target_environment'])
  })

  test('a read key reads but cannot move; no key is 401', async () => {
    expect((await as(readKey).get(`/agents/${agent.id}/status`)).status).toBe(200)
    expect((await as(readKey).get(`/agents/${agent.id}/versions/1`)).status).toBe(200)
    const refused = await as(readKey).post(`/agents/${agent.id}/publish`, {})
    expect(refused.status).toBe(403)
    expect(refused.body.status).toBe(403)
    expect((await legacy('GET', `/agents/${agent.id}/status`)).status).toBe(401)
  })

  test('X-RateLimit headers are on every answer, errors included', async () => {
    for (const r of [await api().get(`/agents/${agent.id}/status`), await api().get(`/agents/${otherAgent.id}/status`), await api().get(`/agents/${agent.id}/versions/abc`)]) {
      expect(r.headers.get('x-ratelimit-limit')).toBe('120')
      expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0)
      expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0)
    }
  })

  test('the legacy document lists every route with its errors', async () => {
    const doc = await (await fetch(`${s.url}/docs/json`)).json()
    const ops: [string, string, string[]][] = [
      ['/agents/{id}/publish', 'post', ['200', '401', '403', '404', '422', '429']],
      ['/agents/{id}/unpublish', 'post', ['200', '401', '403', '404', '409', '422']],
      ['/agents/{id}/status', 'get', ['200', '401', '404', '422']],
      ['/agents/{id}/versions', 'get', ['200', '401', '404']],
      ['/agents/{id}/versions', 'post', ['200', '401', '403', '404', '422']],
      ['/agents/{id}/versions/{vid}', 'get', ['200', '401', '404', '422']],
      ['/agents/{id}/versions/{vid}/rollback', 'post', ['200', '401', '403', '404']],
      ['/agents/{id}/versions/{vid}/promote', 'post', ['200', '400', '401', '403', '404', '409', '422']],
      ['/agents/{id}/versions/{vid}/diff/{vid_b}', 'get', ['200', '401', '404', '422']],
      ['/agents/{id}/diff-draft', 'get', ['200', '401', '404', '409']],
    ]
    for (const [path, method, codes] of ops) {
      const responses = Object.keys(doc.paths?.[path]?.[method]?.responses ?? {})
      expect({ path, method, missing: codes.filter((c) => !responses.includes(c)) }).toEqual({ path, method, missing: [] })
    }
  })
})

describe('agent versions: races and restarts', () => {
  test('publishes racing for one agent each get their own version number', async () => {
    const fresh = (await s.api('POST', '/agents', { key, body: { name: 'Racer' } })).body
    const answers = await Promise.all([1, 2, 3, 4].map(() => api().post(`/agents/${fresh.id}/publish`, {})))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
    expect(answers.map((a) => a.body.version_number).sort()).toEqual([1, 2, 3, 4])
    const list = await versionsOf(fresh.id)
    expect(list.filter((v) => v.is_active).map((v) => v.id)).toEqual([4])
  })

  test('publication state and versions survive a restart', async () => {
    const fresh = (await s.api('POST', '/agents', { key, body: { name: 'Keeper' } })).body
    await api().post(`/agents/${fresh.id}/publish`, {})
    const dir = s.dataDir
    keptDir = dir
    await s.server.stop()
    s = await startTestServer({}, dir)
    expect((await api().get(`/agents/${fresh.id}/status`)).body).toMatchObject({ status: 'published', published_version_id: 1 })
    expect((await s.server.services.of(versionsFeature).serving.servingAgent(ws, fresh.id)).name).toBe('Keeper')
  })
})

describe('legacy integer agent ids', () => {
  test('every agent has a per-account number, shown as agent_id; paths take it or the ag_ id', async () => {
    const dev = await s.developer({ name: 'Numbers', plan: 'pro' })
    const make = async (name: string) => (await s.api('POST', '/agents', { key: dev.key, body: { name } })).body.id as string
    const [a, b] = [await make('One'), await make('Two')]
    const numberOf = async (id: string) => (await legacy('GET', `/agents/${id}/status`, { key: dev.key })).body.agent_id
    expect([await numberOf(a), await numberOf(b)]).toEqual([1, 2])
    // The integer path reaches the same agent.
    expect((await legacy('POST', '/agents/2/publish', { key: dev.key, body: {} })).status).toBe(200)
    expect((await legacy('GET', `/agents/${b}/status`, { key: dev.key })).body).toMatchObject({ agent_id: 2, status: 'published' })
    expect((await legacy('POST', '/agents/2/unpublish', { key: dev.key })).body).toEqual({ success: true, status: 'draft', agent_id: 2 })
    // Never reused: a deleted agent's number is not given again.
    expect((await s.api('DELETE', `/agents/${b}`, { key: dev.key })).status).toBe(204)
    expect((await legacy('GET', '/agents/2/status', { key: dev.key })).status).toBe(404)
    expect(await numberOf(await make('Three'))).toBe(3)
    // Per account: another account's numbers start at 1 and do not reach this one's agents.
    const other = await s.developer({ name: 'Elsewhere' })
    const theirs = (await s.api('POST', '/agents', { key: other.key, body: { name: 'Theirs' } })).body.id
    expect((await legacy('GET', `/agents/${theirs}/status`, { key: other.key })).body.agent_id).toBe(1)
    expect((await legacy('GET', '/agents/3/status', { key: other.key })).status).toBe(404)
    expect((await legacy('GET', '/agents/999/status', { key: dev.key })).status).toBe(404)
  })

  test('an agent stored before numbers existed gets one on first legacy use; racing first uses agree', async () => {
    const dev = await s.developer({ name: 'Old agents', plan: 'pro' })
    const made = await Promise.all(['Old A', 'Old B'].map(async (name) => (await s.api('POST', '/agents', { key: dev.key, body: { name } })).body.id as string))
    // As if stored before: no number on the agent, no claim.
    const agents = await s.server.services.store.collection<any>({ name: 'agents', indexes: [] })
    const claims = await s.server.services.store.collection<any>({ name: 'legacy_agent_numbers', indexes: [] })
    for (const id of made) await agents.update(id, { legacyNumber: null })
    await claims.deleteMany({ workspaceId: dev.id })
    const reads = await Promise.all([...made, ...made].map((id) => legacy('GET', `/agents/${id}/status`, { key: dev.key })))
    const [a1, b1, a2, b2] = reads.map((r) => r.body.agent_id)
    expect(a1).toBe(a2)
    expect(b1).toBe(b2)
    expect(new Set([a1, b1])).toEqual(new Set([1, 2]))
  })
})
