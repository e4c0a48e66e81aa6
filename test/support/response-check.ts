/**
 * Every answer a test receives is checked against the schema its route documents
 * (`detail.responses`, see src/http/docs.ts `answers`): its status must be documented and its
 * JSON body must match, with no undeclared members (a leaked internal field fails the test).
 */

import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

interface DocumentedRoute {
  method: string
  pattern: RegExp
  path: string
  responses: Record<string, { content?: Record<string, { schema?: TSchema }> }> | undefined
}

export type ResponseChecker = (method: string, url: string, status: number, body: unknown) => void

const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\\\/:([A-Za-z_]+)/g, '/[^/]+')
      .replace(/:([A-Za-z_]+)/g, '[^/]+')}/?$`,
  )

export function responseChecker(routes: { method: string; path: string; hooks?: { detail?: { responses?: unknown } } }[]): ResponseChecker {
  const documented: DocumentedRoute[] = routes.map((r) => ({
    method: r.method.toUpperCase(),
    path: r.path,
    pattern: toPattern(r.path),
    responses: r.hooks?.detail?.responses as DocumentedRoute['responses'],
  }))
  // Static segments win over parameters, as in the router.
  const byMethod = (method: string, path: string) =>
    documented.filter((r) => r.method === method && r.pattern.test(path)).sort((a, b) => (a.path.match(/:/g)?.length ?? 0) - (b.path.match(/:/g)?.length ?? 0))[0]

  return (method, url, status, body) => {
    const path = new URL(url).pathname
    const route = byMethod(method.toUpperCase(), path)
    // Unknown routes (404 from the router) and routes without documented answers are not ours to check.
    if (!route?.responses) return
    const answer = route.responses[String(status)]
    if (!answer) throw new Error(`${method} ${route.path} answered ${status}, which it does not document (documented: ${Object.keys(route.responses).join(', ')})`)
    const schema = answer.content?.['application/json']?.schema
    if (!schema) return
    if (!Value.Check(schema, body)) {
      const first = [...Value.Errors(schema, body)][0]
      throw new Error(`${method} ${route.path} → ${status}: body does not match its documented schema at ${first?.path || '/'}: ${first?.message}`)
    }
    // A body that declares itself open (error bodies may carry extra members) is not closed here.
    if ((schema as { additionalProperties?: unknown }).additionalProperties === true) return
    const cleaned = Value.Clean(schema, structuredClone(body))
    if (JSON.stringify(cleaned) !== JSON.stringify(body)) {
      throw new Error(`${method} ${route.path} → ${status}: body has members its documented schema does not declare: ${JSON.stringify(body).slice(0, 300)}`)
    }
  }
}
