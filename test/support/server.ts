/**
 * A real server for end-to-end tests: the whole app on 127.0.0.1 and a free port, a temp
 * DATA_DIR with the embedded store, the manual clock, and a small client.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { createLogger, type Logger } from '../../src/logger'
import { type RunningServer, startServer } from '../../src/server'
import { LENIENT_ADMISSION } from './child-service'
import { responseChecker } from './response-check'

export interface Reply<T = any> {
  status: number
  body: T
  headers: Headers
}

export interface TestServer {
  server: RunningServer
  url: string
  consoleToken: string
  dataDir: string
  /** v1 request with a key (and optional Service-Workspace). */
  api<T = any>(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; workspace?: string; headers?: Record<string, string> }): Promise<Reply<T>>
  /** Console request with the console token. */
  console<T = any>(method: string, path: string, body?: unknown): Promise<Reply<T>>
  /** A developer workspace with a full key. */
  developer(fields?: Record<string, unknown>): Promise<{ id: string; key: string }>
  /** Publishes the agent's draft (POST /agents/{id}/publish): only a published agent talks to people. */
  publish(key: string, agentId: string, workspace?: string): Promise<void>
  /** Creates an agent with `body` and publishes it; answers the created agent. */
  agent(key: string, body: Record<string, unknown>, workspace?: string): Promise<any>
  stop(): Promise<void>
}

/** `logger`: where the server logs (silent unless a test reads the lines, test/support/log-capture.ts). */
export async function startTestServer(env: Record<string, string> = {}, dataDir?: string, logger: Logger = createLogger('silent')): Promise<TestServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'))
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, SERVICE_CLOCK: 'manual', LOG_LEVEL: 'silent', ...LENIENT_ADMISSION, ...env })
  const server = await startServer(config, logger)
  // Every answer is checked against the schema its route documents (test/support/response-check.ts).
  const check = responseChecker(server.app.routes as any)
  const request = async (method: string, url: string, headers: Record<string, string>, body?: unknown, raw?: string): Promise<Reply> => {
    const init: RequestInit = { method, headers: { ...headers } }
    if (raw !== undefined) {
      init.body = raw
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    } else if (body !== undefined) {
      init.body = JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    }
    const res = await fetch(url, init)
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      /* not JSON: keep the text */
    }
    check(method, url, res.status, parsed)
    return { status: res.status, body: parsed, headers: res.headers }
  }
  const t: TestServer = {
    server,
    url: server.url,
    consoleToken: server.consoleToken,
    dataDir: dir,
    api(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) }
      if (opts.key) headers.authorization = `Bearer ${opts.key}`
      if (opts.workspace) headers['service-workspace'] = opts.workspace
      return request(method, `${server.url}/api/v1${path}`, headers, opts.body, opts.raw)
    },
    console(method, path, body) {
      return request(method, `${server.url}/console${path}`, { authorization: `Bearer ${server.consoleToken}` }, body)
    },
    async developer(fields = {}) {
      const r = await t.console('POST', '/workspaces', { name: 'Dev', ...fields })
      if (r.status !== 201) throw new Error(`could not create workspace: ${r.status} ${JSON.stringify(r.body)}`)
      return { id: r.body.id, key: r.body.key }
    },
    async publish(key, agentId, workspace) {
      // The legacy surface has no Service-Workspace header: inside a customer, a key of the customer's publishes.
      let as = key
      if (workspace) {
        const made = await t.api('POST', `/customers/${workspace}/keys`, { key, body: { name: 'publisher', scope: 'full' } })
        if (made.status !== 201) throw new Error(`could not make a key for ${workspace}: ${made.status} ${JSON.stringify(made.body)}`)
        as = made.body.key
      }
      const r = await request('POST', `${server.url}/agents/${agentId}/publish`, { authorization: `Bearer ${as}` }, {})
      if (r.status !== 200) throw new Error(`could not publish ${agentId}: ${r.status} ${JSON.stringify(r.body)}`)
    },
    async agent(key, body, workspace) {
      const r = await t.api('POST', '/agents', { key, body, workspace })
      if (r.status !== 201) throw new Error(`could not create agent: ${r.status} ${JSON.stringify(r.body)}`)
      await t.publish(key, r.body.id, workspace)
      return r.body
    },
    async stop() {
      await server.stop()
      if (!dataDir) rmSync(dir, { recursive: true, force: true })
    },
  }
  return t
}
