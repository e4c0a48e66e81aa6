/**
 * What every API request pays for, checked by structure rather than by timing: Elysia builds each
 * route's handler from the context members its hooks read, so one global hook that takes the whole
 * context makes every request parse cookies, copy its headers into an object and parse its query.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sucrose } from 'elysia/sucrose'
import { startTestServer, type TestServer } from '../support/server'

let t: TestServer

beforeAll(async () => {
  t = await startTestServer()
})

afterAll(async () => {
  await t?.stop()
})

type Hook = ((...args: never[]) => unknown) | { fn: (...args: never[]) => unknown }

/** The context members a route's handler and hooks read, as Elysia infers them when it builds the route. */
function reads(method: string, path: string): string[] {
  // Elysia's route records hold the hooks it composes from; its public type does not name them.
  const route = (t.server.app.routes as unknown as { method: string; path: string; handler: unknown; hooks: Record<string, unknown> }[]).find((r) => r.method === method && r.path === path)
  if (!route) throw new Error(`no route ${method} ${path}`)
  const hooks: Record<string, Hook[]> = {}
  for (const [kind, value] of Object.entries(route.hooks)) if (Array.isArray(value)) hooks[kind] = value as Hook[]
  const none = { body: false, cookie: false, headers: false, query: false, set: false, server: false, url: false, route: false, path: false }
  // sucrose's inference type is a record of booleans; its declared parameter type is a private one.
  const inferred = sucrose({ handler: route.handler, ...hooks } as Parameters<typeof sucrose>[0], none) as unknown as Record<string, boolean>
  return Object.keys(inferred).filter((member) => inferred[member])
}

test('reading an agent parses no cookies, headers object or query string', () => {
  const members = reads('GET', '/api/v1/agents/:id')
  expect(members).not.toContain('cookie')
  expect(members).not.toContain('headers')
  expect(members).not.toContain('query')
})

test('the global hooks (errors, bodies, request log) read only what they name', () => {
  // /health has no hooks of its own and a handler that reads only `set`: what is left is global.
  // (`body` is read by the body check, and parsed only for methods that carry one.)
  const members = reads('GET', '/health')
  expect(members.filter((m) => ['cookie', 'headers', 'query', 'server'].includes(m))).toEqual([])
})

test('nothing reads `server` from the context, so no request has it defined', () => {
  // One hook or plugin that does makes Elysia define a `server` getter on every request's context;
  // the listening server is read from kernel.listening instead.
  const inference = (t.server.app as unknown as { inference: Record<string, boolean> }).inference
  expect(inference.server).toBe(false)
  expect(reads('GET', '/api/v1/agents/:id')).not.toContain('server')
})
