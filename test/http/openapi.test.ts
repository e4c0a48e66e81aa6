/**
 * The three OpenAPI documents (v1, legacy, console), fetched from a running server: each passes a
 * real OpenAPI validator, is 3.1, keeps to its own surface, has a browsable page that loads it, and
 * every v1 operation documents its success and the errors it can answer. Routes are read from the
 * documents and the app, so routes added later are checked without touching this file.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createApp } from '../../src/app'
import { VIEWER_FILES } from '../../src/http/docs-viewer'
import { isVisitorPath } from '../../src/http/surface'
import { startTestServer, type TestServer } from '../support/server'

type Doc = { openapi: string; info: { version: string }; paths?: Record<string, Record<string, Operation>>; components?: any }
type Operation = { parameters?: { name: string; in: string; required?: boolean }[]; requestBody?: unknown; responses?: Record<string, unknown> }

const SURFACES = {
  v1: { json: '/api/v1/docs/json', page: '/api/v1/docs' },
  legacy: { json: '/docs/json', page: '/docs' },
  console: { json: '/console/docs/json', page: '/console/docs' },
} as const
type Surface = keyof typeof SURFACES

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
const isV1 = (path: string) => path === '/api/v1' || path.startsWith('/api/v1/')
const isConsole = (path: string) => path === '/console' || path.startsWith('/console/')
const surfaceOf = (path: string): Surface => (isV1(path) ? 'v1' : isConsole(path) ? 'console' : 'legacy')
/** The pages, their viewer's files and documents, and the health probe, are not API routes. */
// Health and the Prometheus scrape are for load balancers and monitoring (docs/production.md), not API clients.
const NOT_API = new Set(['/health', '/ready', '/metrics', ...Object.values(SURFACES).flatMap((s) => [s.json, s.page, ...VIEWER_FILES.map((f) => `${s.page}/assets/${f}`)])])

let server: TestServer
const docs = {} as Record<Surface, Doc>

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}

beforeAll(async () => {
  server = await startTestServer()
  for (const surface of Object.keys(SURFACES) as Surface[]) {
    const res = await fetch(server.url + SURFACES[surface].json)
    expect(res.status).toBe(200)
    docs[surface] = (await res.json()) as Doc
  }
})

afterAll(async () => {
  await server?.stop()
})

describe('every document', () => {
  for (const surface of Object.keys(SURFACES) as Surface[]) {
    test(`${surface}: passes the OpenAPI validator`, async () => {
      // A fresh validator per document: it keeps the last specification it read.
      const result = await new Validator().validate(structuredClone(docs[surface]) as Record<string, unknown>)
      if (!result.valid) console.error(`${surface} document errors:\n${JSON.stringify(result.errors, null, 2)}`)
      expect(result.errors ?? []).toEqual([])
      expect(result.valid).toBe(true)
    })

    test(`${surface}: is OpenAPI 3.1.x`, () => {
      expect(docs[surface].openapi).toMatch(/^3\.1\.\d+$/)
    })

    test(`${surface}: declares every {param} of a path as a required path parameter`, () => {
      const problems: string[] = []
      for (const { method, path, op } of operations(docs[surface])) {
        for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])) {
          const p = op.parameters?.find((x) => x.in === 'path' && x.name === name)
          if (!p?.required) problems.push(`${method} ${path}: {${name}} not declared as a required path parameter`)
        }
      }
      expect(problems).toEqual([])
    })

    test(`${surface}: has a browsable page that loads this document`, async () => {
      const pageUrl = server.url + SURFACES[surface].page
      const res = await fetch(pageUrl)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type') ?? '').toContain('text/html')
      const html = await res.text()
      expect(html.toLowerCase()).toContain('<html')
      // The page's own script fetches the document from the URL it is configured with; resolved
      // against the page, as a browser does, it must reach this same document.
      const configured = /data-configuration='([^']*)'/.exec(html)?.[1] ?? /data-url="([^"]*)"/.exec(html)?.[1]
      expect(configured).toBeDefined()
      const specUrl = configured!.startsWith('{') ? (JSON.parse(configured!).url as string) : configured!
      const resolved = new URL(specUrl, pageUrl)
      const spec = await fetch(resolved)
      expect({ url: resolved.pathname, status: spec.status }).toEqual({ url: SURFACES[surface].json, status: 200 })
    })
  }
})

describe('surfaces stay apart', () => {
  test('each document holds only its own surface’s paths and none of the doc routes', () => {
    const stray: string[] = []
    for (const surface of Object.keys(SURFACES) as Surface[]) {
      for (const path of Object.keys(docs[surface].paths ?? {})) {
        if (surfaceOf(path) !== surface || NOT_API.has(path)) stray.push(`${surface} document lists ${path}`)
      }
    }
    expect(stray).toEqual([])
  })

  test('every route the app serves is in its surface’s document', () => {
    const app = createApp(server.server.services, server.consoleToken)
    const missing: string[] = []
    for (const route of app.routes) {
      // Recording and received-file links are opaque signed URLs handed out in a call's `recording.url`, not an API route.
      // The website widget's files (`/widget.js`, `/w/{key}`, `/web/…`) and a call's WebRTC offer (`/media/…/webrtc`, beside the media socket) are not API routes either.
      if (NOT_API.has(route.path) || route.method === 'WS' || route.path.startsWith('/recordings/') || route.path.startsWith('/files/')) continue
      if (route.path === '/widget.js' || route.path.startsWith('/w/') || route.path.startsWith('/web/') || route.path.startsWith('/media/')) continue
      // Nor are the console app's page and files (docs/console-app.md); its stream and tickets are documented.
      if (route.path === '/console/app' || route.path === '/console/app/' || route.path.startsWith('/console/app/v/')) continue
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
      const op = docs[surfaceOf(path)].paths?.[path]?.[route.method.toLowerCase()]
      if (!op) missing.push(`${route.method} ${path} is not in the ${surfaceOf(path)} document`)
    }
    expect(missing).toEqual([])
  })
})

describe('legacy document', () => {
  test('is version 1.0.0 with a bearer security scheme', () => {
    const legacy = docs.legacy
    expect(legacy.info.version).toBe('1.0.0')
    const schemes = Object.values<any>(legacy.components?.securitySchemes ?? {})
    expect(schemes.some((s) => s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer')).toBe(true)
  })
})

describe('v1 operations document their answers', () => {
  const codes = (op: Operation) => Object.keys(op.responses ?? {})

  test('the v1 document has operations to check', () => {
    expect(operations(docs.v1).length).toBeGreaterThan(0)
  })

  test('each has a success answer and 401', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(docs.v1)) {
      if (!codes(op).some((c) => /^2\d\d$/.test(c))) problems.push(`${method} ${path}: no 2xx answer`)
      if (!codes(op).includes('401')) problems.push(`${method} ${path}: no 401`)
    }
    expect(problems).toEqual([])
  })

  test('a path parameter means 404; a body or query means 400; a write means 403 (read keys)', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(docs.v1)) {
      const has = (code: string) => codes(op).includes(code)
      if (path.includes('{') && !has('404')) problems.push(`${method} ${path}: has a path parameter but no 404`)
      if (op.requestBody && !has('400')) problems.push(`${method} ${path}: takes a body but no 400`)
      if (op.parameters?.some((p) => p.in === 'query') && !has('400')) problems.push(`${method} ${path}: takes a query but no 400`)
      // The website widget's visitor routes take no key (a signed visitor session instead).
      if (method !== 'GET' && !has('403') && !isVisitorPath(path)) problems.push(`${method} ${path}: a read key is refused with 403, not documented`)
    }
    expect(problems).toEqual([])
  })

  // docs/spec.md: any v1 request may carry Service-Workspace, answering 404 (not yours), 410 (deleted)
  // or 400 (no customers). Every route can therefore answer these, and should say so.
  test('each documents the Service-Workspace header and its 400, 404 and 410', () => {
    const problems: string[] = []
    for (const { method, path, op } of operations(docs.v1)) {
      const header = op.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'service-workspace')
      if (!header) problems.push(`${method} ${path}: no Service-Workspace header parameter`)
      const absent = ['400', '404', '410'].filter((c) => !codes(op).includes(c))
      if (absent.length) problems.push(`${method} ${path}: missing ${absent.join(', ')}`)
    }
    expect(problems).toEqual([])
  })
})
