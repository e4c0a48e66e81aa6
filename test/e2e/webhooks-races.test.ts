/**
 * The webhook caps under concurrent creates, end to end: a burst of creates for one agent (v1) or
 * one account (legacy) must leave exactly the cap, however the requests interleave between the
 * up-front count and the insert. And a v1 create that lands while its agent is being deleted is
 * refused and leaves nothing behind.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { agentsFeature } from '../../src/features/agents'
import { MAX_LEGACY_ENDPOINTS } from '../../src/features/webhooks/legacy-service'
import { MAX_WEBHOOKS_PER_AGENT } from '../../src/features/webhooks/service'
import { startTestServer, type TestServer } from '../support/server'

let server: TestServer

// Private targets allowed: create skips the DNS check, so no test here needs a resolver.
beforeAll(async () => {
  server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
})

afterAll(async () => {
  await server?.stop()
})

const collection = (name: string) => server.server.services.store.collection({ name, indexes: [] })

/**
 * Runs `run` with every insert into `name` waiting for `wait()` first, as a create waits for DNS
 * or a store across a network. Without it the embedded store settles every await at once, a
 * create runs from its count to its insert without yielding, and no burst ever interleaves.
 * The store hands out one collection object per name, so the services see the slow insert too.
 */
async function withSlowInserts<T>(name: string, wait: () => Promise<unknown>, run: () => Promise<T>): Promise<T> {
  const c = await collection(name)
  const insert = c.insert
  c.insert = async (doc) => {
    await wait()
    return insert.call(c, doc)
  }
  try {
    return await run()
  } finally {
    delete (c as Partial<typeof c>).insert
  }
}

const ms = (n: number) => () => Bun.sleep(n)

const createAgent = async (key: string, name = 'Ava') => (await server.api('POST', '/agents', { key, body: { name } })).body.id as string

function legacy(method: string, path: string, key: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
}

/** How many answers had each status, e.g. `{ 201: 20, 409: 40 }`. */
function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {}
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1
  return out
}

describe('v1: 20 webhooks per agent', () => {
  test('60 concurrent creates for one agent: exactly 20 succeed, the rest get the cap refusal, the store holds 20', async () => {
    const dev = await server.developer({ name: 'Burst v1', plan: 'pro' })
    const agent = await createAgent(dev.key)
    const answers = await withSlowInserts('webhooks', ms(2), () =>
      Promise.all(Array.from({ length: 60 }, (_, i) => server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `https://hooks.example.com/${i}` } }))),
    )
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: MAX_WEBHOOKS_PER_AGENT, 409: 60 - MAX_WEBHOOKS_PER_AGENT })
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.body.error).toBe(`agent ${agent} has ${MAX_WEBHOOKS_PER_AGENT} webhooks, the most one agent may have (${MAX_WEBHOOKS_PER_AGENT})`)
    }
    const webhooks = await collection('webhooks')
    expect(await webhooks.count({ workspaceId: dev.id, agentId: agent })).toBe(MAX_WEBHOOKS_PER_AGENT)
    // The ones answered 201 are the ones kept.
    const kept = (await webhooks.find({ workspaceId: dev.id, agentId: agent })).map((d) => d.id).sort()
    expect(
      answers
        .filter((a) => a.status === 201)
        .map((a) => a.body.id as string)
        .sort(),
    ).toEqual(kept)
    const listed = await server.api('GET', `/webhooks?agent=${agent}&limit=100`, { key: dev.key })
    expect(listed.body.items).toHaveLength(MAX_WEBHOOKS_PER_AGENT)
    // Full: one more is refused up front.
    expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://hooks.example.com/late' } })).status).toBe(409)
  })

  test('a burst with room for 3 keeps 3 (the refusals do not crowd out the creates that fit)', async () => {
    const dev = await server.developer({ name: 'Almost full', plan: 'pro' })
    const agent = await createAgent(dev.key)
    for (let i = 0; i < MAX_WEBHOOKS_PER_AGENT - 3; i++) {
      expect((await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `https://hooks.example.com/seq/${i}` } })).status).toBe(201)
    }
    const answers = await withSlowInserts('webhooks', ms(2), () =>
      Promise.all(Array.from({ length: 30 }, (_, i) => server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `https://hooks.example.com/burst/${i}` } }))),
    )
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: 3, 409: 27 })
    expect(await (await collection('webhooks')).count({ workspaceId: dev.id, agentId: agent })).toBe(MAX_WEBHOOKS_PER_AGENT)
  })

  test('the cap is per agent: a burst for one agent does not refuse another agent', async () => {
    const dev = await server.developer({ name: 'Two agents', plan: 'pro' })
    const [a, b] = [await createAgent(dev.key, 'Ava'), await createAgent(dev.key, 'Bea')]
    const answers = await withSlowInserts('webhooks', ms(2), () =>
      Promise.all(Array.from({ length: 30 }, (_, i) => server.api('POST', '/webhooks', { key: dev.key, body: { agent: i % 2 ? a : b, url: `https://hooks.example.com/${i}` } }))),
    )
    expect(tally(answers.map((r) => r.status))).toEqual({ 201: 30 })
  })

  test('inserts landing out of creation order still leave at most 20, and every 201 is a kept row', async () => {
    // Here a create made later can land (and count) before one made earlier: keeping a row only
    // for "fewer than 20 made before it" would keep both. Some creates wait here before backing out.
    const dev = await server.developer({ name: 'Out of order', plan: 'pro' })
    const agent = await createAgent(dev.key)
    const answers = await withSlowInserts(
      'webhooks',
      () => Bun.sleep(Math.floor(Math.random() * 10)),
      () => Promise.all(Array.from({ length: 60 }, (_, i) => server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: `https://hooks.example.com/${i}` } }))),
    )
    const created = answers.filter((a) => a.status === 201).map((a) => a.body.id as string)
    expect(created.length + answers.filter((a) => a.status === 409).length).toBe(60)
    expect(created.length).toBeGreaterThan(0)
    expect(created.length).toBeLessThanOrEqual(MAX_WEBHOOKS_PER_AGENT)
    const kept = (await (await collection('webhooks')).find({ workspaceId: dev.id, agentId: agent })).map((d) => d.id)
    expect(kept.sort()).toEqual(created.sort())
  })
})

describe('legacy: 20 endpoints per account', () => {
  test('40 concurrent creates in one account: exactly 20 succeed, the rest answer 400, the store holds 20', async () => {
    const dev = await server.developer({ name: 'Burst legacy' })
    const answers = await withSlowInserts('legacy_webhook_endpoints', ms(2), () =>
      Promise.all(Array.from({ length: 40 }, (_, i) => legacy('POST', '/webhooks/endpoints', dev.key, { url: `https://hooks.example.com/${i}`, event_types: ['lead.captured'] }))),
    )
    expect(tally(answers.map((a) => a.status))).toEqual({ 200: MAX_LEGACY_ENDPOINTS, 400: 40 - MAX_LEGACY_ENDPOINTS })
    for (const refused of answers.filter((a) => a.status === 400)) {
      expect(refused.body.detail).toBe(`this account has ${MAX_LEGACY_ENDPOINTS} webhook endpoints, the most allowed (${MAX_LEGACY_ENDPOINTS})`)
    }
    const endpoints = await collection('legacy_webhook_endpoints')
    expect(await endpoints.count({ workspaceId: dev.id })).toBe(MAX_LEGACY_ENDPOINTS)
    const listed = (await legacy('GET', '/webhooks/endpoints', dev.key)).body.endpoints as { id: number }[]
    expect(listed.map((e) => e.id).sort((x, y) => x - y)).toEqual(
      answers
        .filter((a) => a.status === 200)
        .map((a) => a.body.endpoint.id as number)
        .sort((x, y) => x - y),
    )
    expect((await legacy('POST', '/webhooks/endpoints', dev.key, { url: 'https://hooks.example.com/late', event_types: ['lead.captured'] })).status).toBe(400)
  })

  test('the list shows every endpoint, also more than 20 (left by the race before the fix)', async () => {
    const dev = await server.developer({ name: 'Over the cap' })
    for (let i = 0; i < MAX_LEGACY_ENDPOINTS; i++) {
      expect((await legacy('POST', '/webhooks/endpoints', dev.key, { url: `https://hooks.example.com/${i}`, event_types: ['lead.captured'] })).status).toBe(200)
    }
    // What the race used to leave: endpoints beyond the cap, written straight to the store.
    const endpoints = await collection('legacy_webhook_endpoints')
    const template = (await endpoints.findOne({ workspaceId: dev.id, number: 1 }))!
    for (let n = MAX_LEGACY_ENDPOINTS + 1; n <= MAX_LEGACY_ENDPOINTS + 3; n++) {
      await endpoints.insert({ ...template, id: `lwe_${dev.id}_${n}`, number: n })
    }
    const listed = (await legacy('GET', '/webhooks/endpoints', dev.key)).body.endpoints as { id: number }[]
    expect(listed.map((e) => e.id)).toEqual(Array.from({ length: MAX_LEGACY_ENDPOINTS + 3 }, (_, i) => MAX_LEGACY_ENDPOINTS + 3 - i))
  })
})

describe('creates racing their agent’s delete', () => {
  test('v1: the agent is deleted while the create waits: 404, nothing stored', async () => {
    const dev = await server.developer({ name: 'Deleted meanwhile', plan: 'pro' })
    const agent = await createAgent(dev.key)
    let release!: () => void
    const gate = new Promise<void>((done) => (release = done))
    let waiting!: () => void
    const inserting = new Promise<void>((done) => (waiting = done))
    const create = withSlowInserts(
      'webhooks',
      () => {
        waiting()
        return gate
      },
      () => server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://hooks.example.com/meanwhile' } }),
    )
    await inserting // checked the agent and the cap; its insert is held
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    release()
    const answer = await create
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: { error: `no agent ${agent} in this workspace` } })
    expect(await (await collection('webhooks')).count({ agentId: agent })).toBe(0)
  })

  test('v1 and legacy: a create landing while the agent-delete cascade runs (agent still readable) answers 404, stores nothing', async () => {
    const dev = await server.developer({ name: 'Racing delete', plan: 'pro' })
    const agent = await createAgent(dev.key)
    const agentNumber = (await legacy('GET', `/agents/${agent}/status`, dev.key)).body.agent_id
    // Registered after every cascade the server has (webhooks' included), so it runs after the
    // webhooks are swept and before the agent's own row goes: the agent still reads as present.
    const during: { status: number; body: unknown }[] = []
    server.server.services.of(agentsFeature).agents.onDelete(async (doc) => {
      if (doc.id !== agent) return
      const v1 = await server.api('POST', '/webhooks', { key: dev.key, body: { agent, url: 'https://hooks.example.com/late' } })
      during.push({ status: v1.status, body: v1.body })
      during.push(await legacy('POST', '/webhooks/endpoints', dev.key, { url: 'https://hooks.example.com/late', event_types: ['lead.captured'], agent_id: agentNumber }))
    })
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    expect(during).toEqual([
      { status: 404, body: { error: `no agent ${agent} in this workspace` } },
      { status: 404, body: { status: 404, detail: `no agent ${agent} in this workspace` } },
    ])
    expect(await (await collection('webhooks')).count({ agentId: agent })).toBe(0)
    expect(await (await collection('legacy_webhook_endpoints')).count({ workspaceId: dev.id })).toBe(0)
  })
})
