/**
 * The tenancy world the v1 route probes share (test/e2e/tenancy-*.test.ts): developers A and B,
 * each with customers, agents, documents, conversations, webhooks, calls, sequences and campaigns,
 * and every v1 route the app serves. Routes are read from the app itself, so a route added later is
 * tried without editing the tests — unless it brings a path parameter nobody has mapped to a
 * resource yet, which fails loudly (see PARAM_RESOURCE).
 */

import { createApp } from '../../src/app'
import { tenancyFeature } from '../../src/features/workspaces'
import { isVisitorPath } from '../../src/http/surface'
import { randomId } from '../../src/ids'
import { startTestServer, type TestServer } from './server'

/** The resource kinds a v1 path parameter can name. */
export type Kind = 'customer' | 'customerKey' | 'agent' | 'document' | 'conversation' | 'webhook' | 'call' | 'sequence' | 'campaign' | 'scenario' | 'suite' | 'run'

/**
 * Which resource each path parameter names, keyed by the path segment before it. A new route with
 * an unmapped parameter fails the enumeration test (tenancy-isolation.test.ts): add its kind here,
 * create one for A and for B below.
 */
const PARAM_RESOURCE: Record<string, Kind> = {
  'customers/{id}': 'customer',
  'keys/{keyId}': 'customerKey',
  'agents/{id}': 'agent',
  'knowledge/{documentId}': 'document',
  'conversations/{id}': 'conversation',
  'webhooks/{id}': 'webhook',
  'calls/{id}': 'call',
  'sequences/{sequenceId}': 'sequence',
  'campaigns/{id}': 'campaign',
  'scenarios/{id}': 'scenario',
  'suites/{id}': 'suite',
  'runs/{id}': 'run',
}

/** Bodies for routes whose schema-made minimal body would be refused before the handler looks. */
const BODY_OVERRIDES: Record<string, unknown> = {}

const HTTP = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

export interface Route {
  method: string
  /** OpenAPI form, e.g. /customers/{id}/keys/{keyId}, relative to /api/v1. */
  path: string
  kinds: Kind[]
  body?: unknown
  query: string
}

export interface Actor {
  label: string
  key: string
  workspace?: string
  /** The actor's own resources, used for the parameters that are not under attack. */
  own: Record<Kind, string>
}

type CheckOpts = { key?: string; workspace?: string; headers?: Record<string, string> }

/** The running server, the routes under test and A's and B's credentials and resource ids. */
export interface Tenants {
  server: TestServer
  routes: Route[]
  /** Path parameters with no PARAM_RESOURCE entry: must stay empty. */
  unmapped: string[]
  A: { dev: Actor; inA1: Actor; a1Key: Actor; a2: string; revokedDevKey: string; revokedCustomerKey: string }
  B: { key: string; devWorkspace: string; b1: string; b1Key: string; dev: Record<Kind, string>; inB1: Record<Kind, string>; secrets: string[] }
  /** Calls a route and returns a problem line, or null when the expected status came back and no B data leaked. */
  check(what: string, route: Route, ids: string[], expected: number, opts: CheckOpts): Promise<string | null>
  /** Every status `check` met that the v1 document does not list for its operation. */
  undocumented(): Promise<string[]>
}

/** A minimal value that passes a JSON schema: required members only, lower bounds, first choices. */
function sample(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return null
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  const branches = schema.anyOf ?? schema.oneOf
  if (Array.isArray(branches)) {
    // Skip null and Elysia's numeric-string coercion branches: the plain typed branch is clearer.
    const plain = branches.find((b: any) => b.type !== 'null' && !(b.type === 'string' && /^(integer|number)$/.test(b.format ?? '')))
    return sample(plain ?? branches[0])
  }
  if (Array.isArray(schema.allOf)) return sample(Object.assign({}, ...schema.allOf))
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : (schema.type ?? (schema.properties ? 'object' : undefined))
  switch (type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name: string) => [name, sample(schema.properties?.[name])]))
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items))
    case 'string': {
      const text = 'tenancy probe'.padEnd(schema.minLength ?? 0, 'x')
      return text.slice(0, schema.maxLength ?? text.length)
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? Math.min(1, schema.maximum ?? 1)
    case 'boolean':
      return false
    default:
      return null
  }
}

/** The v1 routes the app serves, with a body and required query made from the v1 document. */
function enumerate(server: TestServer, v1Doc: any, unmapped: string[]): Route[] {
  const app = createApp(server.server.services, server.consoleToken)
  const found: Route[] = []
  for (const route of app.routes) {
    if (!route.path.startsWith('/api/v1/') || route.path.startsWith('/api/v1/docs')) continue
    // The website widget's visitor routes are keyed by the widget key, not by a workspace's API key (test/e2e/web-chat.test.ts).
    if (isVisitorPath(route.path)) continue
    if (!HTTP.has(route.method)) throw new Error(`tenancy: ${route.method} ${route.path} is not a method this test knows how to call`)
    const full = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const path = full.slice('/api/v1'.length)
    const kinds: Kind[] = []
    for (const m of path.matchAll(/([^/]+)\/\{([^}]+)\}/g)) {
      const kind = PARAM_RESOURCE[`${m[1]}/{${m[2]}}`]
      if (kind) kinds.push(kind)
      else unmapped.push(`${route.method} ${path}: {${m[2]}} after "${m[1]}" has no entry in PARAM_RESOURCE`)
    }
    const op = v1Doc.paths?.[full]?.[route.method.toLowerCase()]
    const schema = op?.requestBody?.content?.['application/json']?.schema
    const key = `${route.method} ${path}`
    const body = key in BODY_OVERRIDES ? BODY_OVERRIDES[key] : schema ? sample(schema) : route.method === 'GET' || route.method === 'DELETE' ? undefined : {}
    const query = new URLSearchParams((op?.parameters ?? []).filter((p: any) => p.in === 'query' && p.required).map((p: any) => [p.name, String(sample(p.schema))])).toString()
    found.push({ method: route.method, path, kinds, body, query })
  }
  // Deletes last: if one wrongly succeeds it cannot take away what the other checks need.
  return found.sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'))
}

const fill = (route: Route, ids: string[]): string => {
  let i = 0
  const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(ids[i++]))
  return route.query ? `${path}?${route.query}` : path
}

export const isCustomerManagement = (route: Route) => route.path === '/customers' || route.path.startsWith('/customers/')

/** Starts a server and builds A's and B's resources through the API, B's marked with a secret. */
export async function startTenants(): Promise<Tenants> {
  // The key checks send hundreds of refused keys from this one address on purpose.
  const server = await startTestServer({ AUTH_FAILURES_PER_MINUTE: '0' })
  const A = {} as Tenants['A']
  const B = {} as Tenants['B']
  const unmapped: string[] = []
  /** Every status seen per operation, to compare with what the v1 document says it answers. */
  const seen = new Map<string, Set<number>>()
  let numbers = 0

  async function check(what: string, route: Route, ids: string[], expected: number, opts: CheckOpts): Promise<string | null> {
    const res = await server.api(route.method, fill(route, ids), { ...opts, body: route.body })
    const op = `${route.method} ${route.path}`
    if (!seen.has(op)) seen.set(op, new Set())
    seen.get(op)!.add(res.status)
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body)
    const leaked = B.secrets.filter((s) => text?.includes(s))
    if (res.status === expected && !leaked.length) return null
    const hint = res.status === 400 && expected === 404 && route.body !== undefined ? ' (body refused first? add BODY_OVERRIDES)' : ''
    return `${what}: ${route.method} ${fill(route, ids)} answered ${res.status}${hint}${leaked.length ? ` LEAKING B's ${leaked.join(', ')}` : ''} ${text?.slice(0, 200)}`
  }

  async function undocumented(): Promise<string[]> {
    const v1Doc = await (await fetch(`${server.url}/api/v1/docs/json`)).json()
    const problems: string[] = []
    for (const [op, statuses] of seen) {
      const [method, path] = op.split(' ')
      const documented = Object.keys(v1Doc.paths?.[`/api/v1${path}`]?.[method.toLowerCase()]?.responses ?? {})
      const missing = [...statuses].filter((s) => !documented.includes(String(s)))
      if (missing.length) problems.push(`${op} answered ${missing.join(', ')} but documents ${documented.join(', ')}`)
    }
    return problems
  }

  /** A conversation through test chat (it answers 200, not 201). */
  async function converse(key: string, agent: string, message: string, workspace?: string): Promise<string> {
    const res = await server.api('POST', `/agents/${agent}/test-chat`, { key, body: { message }, workspace })
    if (res.status !== 200) throw new Error(`setup: test chat answered ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.session
  }

  /** A live call placed through the API: the agent answers the phone on a new number, the callee never hangs up. */
  async function placeCall(key: string, ws: string, agent: string, reference: string, workspace?: string): Promise<string> {
    const n = ++numbers
    const agentNumber = `+1415555${String(7000 + n)}`
    const callee = `+1415555${String(8000 + n)}`
    const patched = await server.api('PATCH', `/agents/${agent}`, { key, body: { voice: { answersCalls: true } }, workspace })
    if (patched.status !== 200) throw new Error(`setup: agent voice answered ${patched.status}`)
    await server.publish(key, agent, workspace)
    const attached = await server.console('POST', `/workspaces/${ws}/phone-numbers`, { number: agentNumber, source: 'rented', agent })
    if (attached.status !== 201) throw new Error(`setup: number answered ${attached.status} ${JSON.stringify(attached.body)}`)
    await server.console('POST', `/workspaces/${ws}/contacts`, { phone: callee })
    await server.console('PUT', `/sandbox/phones/${encodeURIComponent(callee)}`, { pickup: 'answer', hangupAfterMs: null })
    const res = await server.api('POST', '/calls', { key, body: { to: callee, purpose: 'Tenancy check', reference }, workspace })
    if (res.status !== 202) throw new Error(`setup: POST /calls answered ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.id
  }

  /** A sequence (console-made) for an agent of `ws`. */
  async function sequence(ws: string, agent: string): Promise<string> {
    const res = await server.console('POST', `/workspaces/${ws}/sequences`, { name: 'Tenancy', agent, steps: [{ text: 'Hi', delayMinutes: 0 }] })
    if (res.status !== 201) throw new Error(`setup: sequence answered ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.id
  }

  /** A calling campaign (console-made, left a draft) for an agent of `ws` that answers the phone. */
  async function campaign(ws: string, agent: string): Promise<string> {
    const res = await server.console('POST', `/workspaces/${ws}/campaigns`, { agent, name: 'Tenancy', kind: 'voice', purpose: 'Tenancy check', recipients: ['+14155559990'] })
    if (res.status !== 201) throw new Error(`setup: campaign answered ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.id
  }

  /** A simulation scenario, a suite of it on `agent`, and a run of that suite against the draft, cancelled at once (its ids are what the probes need, not its calls). */
  async function simulation(key: string, agent: string, name: string, workspace?: string): Promise<{ scenario: string; suite: string; run: string }> {
    const scenario = await post(key, '/simulations/scenarios', { name, channel: 'phone', caller: { lines: [{ say: 'Hello' }] } }, workspace)
    const suite = await post(key, '/simulations/suites', { name, agent, scenarios: [scenario.id] }, workspace)
    const run = await server.api('POST', `/simulations/suites/${suite.id}/runs`, { key, body: { target: 'draft' }, workspace })
    if (run.status !== 202) throw new Error(`setup: a simulation run answered ${run.status} ${JSON.stringify(run.body)}`)
    const cancelled = await server.api('POST', `/simulations/runs/${run.body.id}/cancel`, { key, workspace })
    if (cancelled.status !== 200) throw new Error(`setup: cancelling a simulation run answered ${cancelled.status} ${JSON.stringify(cancelled.body)}`)
    return { scenario: scenario.id, suite: suite.id, run: run.body.id }
  }

  async function post(key: string, path: string, body: unknown, workspace?: string): Promise<any> {
    const res = await server.api('POST', path, { key, body, workspace })
    if (res.status !== 201) throw new Error(`setup: POST ${path} answered ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }

  const devA = await server.developer({ name: 'Tenant A', plan: 'pro' })
  const devB = await server.developer({ name: 'Tenant B', plan: 'pro' })

  // B: everything through the API, with a marker so any of B's data in an answer to A is spotted.
  const secret = `bsecret${randomId(10)}`
  const b1 = await post(devB.key, '/customers', { name: `B one ${secret}`, externalId: `ext-${secret}`, metadata: { note: secret } })
  const bAgent = await post(devB.key, '/agents', { name: `B agent ${secret}`, greeting: `Hello from ${secret}` })
  const b1Agent = await post(devB.key, '/agents', { name: `B1 agent ${secret}` }, b1.id)
  const b1Key = await post(devB.key, `/customers/${b1.id}/keys`, { name: `key ${secret}`, scope: 'full' })
  const bDoc = await post(devB.key, `/agents/${bAgent.id}/knowledge`, { text: `Opening hours ${secret}`, title: `doc ${secret}` })
  const b1Doc = await post(devB.key, `/agents/${b1Agent.id}/knowledge`, { text: `Prices ${secret}`, title: `doc ${secret}` }, b1.id)
  const bConv = await converse(devB.key, bAgent.id, `Hello ${secret}`)
  const b1Conv = await converse(devB.key, b1Agent.id, `Hello ${secret}`, b1.id)
  // A public address literal: accepted without DNS, and no event is published to it here.
  const bHook = await post(devB.key, '/webhooks', { agent: bAgent.id, url: `https://1.1.1.1/${secret}` })
  const b1Hook = await post(devB.key, '/webhooks', { agent: b1Agent.id, url: `https://1.1.1.1/${secret}` }, b1.id)
  const bCall = await placeCall(devB.key, devB.id, bAgent.id, `ref-${secret}`)
  const b1Call = await placeCall(devB.key, b1.id, b1Agent.id, `ref-${secret}`, b1.id)
  B.key = devB.key
  B.devWorkspace = devB.id
  B.b1 = b1.id
  B.b1Key = b1Key.key
  const bSeq = await sequence(devB.id, bAgent.id)
  const b1Seq = await sequence(b1.id, b1Agent.id)
  B.dev = {
    customer: b1.id,
    customerKey: b1Key.id,
    agent: bAgent.id,
    document: bDoc.id,
    conversation: bConv,
    webhook: bHook.id,
    call: bCall,
    sequence: bSeq,
    campaign: await campaign(devB.id, bAgent.id),
    ...(await simulation(devB.key, bAgent.id, `B ${secret}`)),
  }
  B.inB1 = {
    customer: b1.id,
    customerKey: b1Key.id,
    agent: b1Agent.id,
    document: b1Doc.id,
    conversation: b1Conv,
    webhook: b1Hook.id,
    call: b1Call,
    sequence: b1Seq,
    campaign: await campaign(b1.id, b1Agent.id),
    ...(await simulation(devB.key, b1Agent.id, `B1 ${secret}`, b1.id)),
  }
  B.secrets = [secret, devB.key, b1Key.key, bAgent.webKey, b1Agent.webKey].filter(Boolean)

  // A: two customers, agents in the developer workspace and in A1, and A1 keys (one to attack with,
  // one to stand in as A's own key id, one revoked), plus a revoked developer key.
  const a1 = await post(devA.key, '/customers', { name: 'A one' })
  const a2 = await post(devA.key, '/customers', { name: 'A two' })
  const aAgent = await post(devA.key, '/agents', { name: 'A agent' })
  const a1Agent = await post(devA.key, '/agents', { name: 'A1 agent' }, a1.id)
  const aDoc = await post(devA.key, `/agents/${aAgent.id}/knowledge`, { text: 'A opening hours' })
  const a1Doc = await post(devA.key, `/agents/${a1Agent.id}/knowledge`, { text: 'A1 prices' }, a1.id)
  const attack = await post(devA.key, `/customers/${a1.id}/keys`, { name: 'attack', scope: 'full' })
  const spare = await post(devA.key, `/customers/${a1.id}/keys`, { name: 'spare', scope: 'full' })
  const revoked = await post(devA.key, `/customers/${a1.id}/keys`, { name: 'revoked', scope: 'full' })
  const revoke = await server.api('DELETE', `/customers/${a1.id}/keys/${revoked.id}`, { key: devA.key })
  if (revoke.status !== 204) throw new Error(`setup: revoking a customer key answered ${revoke.status}`)
  // No HTTP route revokes a developer key yet, so the key service does it.
  const devKey = await server.console('POST', `/workspaces/${devA.id}/keys`, { name: 'to revoke', scope: 'full' })
  await server.server.services.of(tenancyFeature).keys.revoke(devA.id, devKey.body.id)

  const aConv = await converse(devA.key, aAgent.id, 'Hello')
  const a1Conv = await converse(devA.key, a1Agent.id, 'Hello', a1.id)
  const aHook = await post(devA.key, '/webhooks', { agent: aAgent.id, url: 'https://1.1.1.1/a' })
  const a1Hook = await post(devA.key, '/webhooks', { agent: a1Agent.id, url: 'https://1.1.1.1/a1' }, a1.id)
  const aCall = await placeCall(devA.key, devA.id, aAgent.id, 'ref-a')
  const a1Call = await placeCall(devA.key, a1.id, a1Agent.id, 'ref-a1', a1.id)
  const inA1 = {
    customer: a1.id,
    customerKey: spare.id,
    agent: a1Agent.id,
    document: a1Doc.id,
    conversation: a1Conv,
    webhook: a1Hook.id,
    call: a1Call,
    sequence: await sequence(a1.id, a1Agent.id),
    campaign: await campaign(a1.id, a1Agent.id),
    ...(await simulation(devA.key, a1Agent.id, 'A1', a1.id)),
  }
  A.dev = {
    label: 'A developer key',
    key: devA.key,
    own: {
      customer: a1.id,
      customerKey: spare.id,
      agent: aAgent.id,
      document: aDoc.id,
      conversation: aConv,
      webhook: aHook.id,
      call: aCall,
      sequence: await sequence(devA.id, aAgent.id),
      campaign: await campaign(devA.id, aAgent.id),
      ...(await simulation(devA.key, aAgent.id, 'A')),
    },
  }
  A.inA1 = { label: 'A developer key in A1', key: devA.key, workspace: a1.id, own: inA1 }
  A.a1Key = { label: 'A1 customer key', key: attack.key, own: inA1 }
  A.a2 = a2.id
  A.revokedDevKey = devKey.body.key
  A.revokedCustomerKey = revoked.key

  const v1Doc = await (await fetch(`${server.url}/api/v1/docs/json`)).json()
  const routes = enumerate(server, v1Doc, unmapped)
  return { server, routes, unmapped, A, B, check, undocumented }
}
