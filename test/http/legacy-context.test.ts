/** The legacy kernel on a tiny app: auth, error shapes, and rate limits with their headers. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { ManualClock } from '../../src/clock'
import { openLocalCoordination } from '../../src/coordination/local'
import { openApiKeys } from '../../src/features/workspaces/key-repository'
import { KeyService } from '../../src/features/workspaces/keys'
import { openWorkspaces } from '../../src/features/workspaces/repository'
import { WorkspaceService } from '../../src/features/workspaces/service'
import { errorPlugin } from '../../src/http/error-plugin'
import { legacyContext } from '../../src/http/legacy-context'
import { createLogger } from '../../src/logger'
import { openSqliteStore } from '../../src/store/sqlite'

const clock = new ManualClock(Date.parse('2026-11-21T10:00:30.000Z'))
let app: { stop(): Promise<void> } & any
let base: string
let key: string
let readKey: string

beforeAll(async () => {
  const store = await openSqliteStore(':memory:')
  const coordination = await openLocalCoordination(':memory:')
  const workspaces = await openWorkspaces(store)
  const keys = new KeyService(await openApiKeys(store), workspaces, clock)
  const ws = await new WorkspaceService(workspaces, clock).createDeveloper({ name: 'Legacy' })
  key = (await keys.issue(ws, 'k', 'full')).key
  readKey = (await keys.issue(ws, 'r', 'read')).key
  const rule = { name: 'test', limit: 3, windowMs: 60_000 }
  app = new Elysia({ normalize: false })
    .use(errorPlugin(createLogger('silent')))
    .use(
      new Elysia()
        .use(
          legacyContext({ auth: { authenticate: (header) => keys.authenticate(header), resolve: async (principal) => principal.home }, coordination, clock, rule, server: () => app?.server ?? null }),
        )
        .get('/thing', ({ workspace }) => ({ workspace: workspace.id }))
        .post('/thing', ({ body }) => body, { body: t.Object({ url: t.String() }, { additionalProperties: false }) }),
    )
    .listen({ port: 0, hostname: '127.0.0.1' })
  base = `http://127.0.0.1:${app.server.port}`
})
afterAll(() => app.stop())

const call = (method: string, k: string | null, body?: unknown) =>
  fetch(`${base}/thing`, {
    method,
    headers: { ...(k ? { authorization: `Bearer ${k}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })

test('validation failure → 422 { detail: [{ loc, msg, type }] }', async () => {
  const r = await call('POST', key, { url: 5, extra: 1 })
  expect(r.status).toBe(422)
  const body = await r.json()
  expect(body.detail).toBeArray()
  expect(body.detail).toContainEqual({ loc: ['body', 'url'], msg: 'must be a string', type: 'value_error' })
  expect(body.detail).toContainEqual({ loc: ['body', 'extra'], msg: 'is not a known field', type: 'extra_forbidden' })
})

test('401 and 403 in the legacy shape', async () => {
  const r = await call('GET', 'sk_wrong', undefined)
  expect(r.status).toBe(401)
  expect(await r.json()).toMatchObject({ status: 401, detail: expect.any(String) })
  const ro = await call('POST', readKey, { url: 'x' })
  expect(ro.status).toBe(403)
  expect(await ro.json()).toMatchObject({ status: 403 })
})

test('X-RateLimit-* on every answer; 429 with Retry-After past the limit; the next window resets', async () => {
  clock.advance(60_000) // a fresh window for this key
  const answers = []
  for (let i = 0; i < 4; i++) answers.push(await call('GET', key))
  expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429])
  expect(answers.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0'])
  for (const r of answers) {
    expect(r.headers.get('x-ratelimit-limit')).toBe('3')
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(Date.parse('2026-11-21T10:02:00.000Z') / 1000))
  }
  const limited = answers[3]
  expect(limited.headers.get('retry-after')).toBe('30') // 10:01:30 to the window's end at 10:02:00
  expect(await limited.json()).toMatchObject({ status: 429 })
  clock.advance(60_000)
  expect((await call('GET', key)).status).toBe(200)
})
