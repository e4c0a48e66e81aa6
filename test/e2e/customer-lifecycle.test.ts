/**
 * The customer lifecycle over HTTP (docs/spec.md "Customer workspace"): DELETE, restore and the 30-day
 * erasure on the manual clock, including across a server restart (the erasure is a durable timer).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventsSpec } from '../../src/events/bus'
import { contactsSpec } from '../../src/features/contacts/repository'
import { conversationsSpec, messagesSpec } from '../../src/features/conversations/repository'
import { DOCUMENTS, PASSAGES, SEARCHES } from '../../src/features/knowledge/repository'
import { usageSpec } from '../../src/features/usage/ledger'
import type { CustomerLifecycleEvent } from '../../src/kernel/customer-lifecycle'
import type { CollectionSpec } from '../../src/store/port'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const DAY = 24 * 60 * 60 * 1000
const ERASE_AFTER_MS = 30 * DAY // docs/spec.md Limits: erasure delay after customer delete

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

type Dev = { id: string; key: string }

const now = async (t: TestServer) => Date.parse((await t.console('GET', '/clock')).body.now)
const advance = (t: TestServer, ms: number) => t.console('POST', '/clock/advance', { ms })

async function newCustomer(t: TestServer, dev: Dev, name = 'Acme'): Promise<string> {
  const r = await t.api('POST', '/customers', { key: dev.key, body: { name } })
  if (r.status !== 201) throw new Error(`customer: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id
}

/** An agent with knowledge, a test-chat conversation and a contact inside the customer. */
async function populate(t: TestServer, dev: Dev, customer: string): Promise<string> {
  const agent = await t.api('POST', '/agents', { key: dev.key, workspace: customer, body: { name: 'Helper' } })
  expect(agent.status).toBe(201)
  const doc = await t.api('POST', `/agents/${agent.body.id}/knowledge`, {
    key: dev.key,
    workspace: customer,
    body: { text: 'Our returns window is 30 days from delivery.', title: 'Returns' },
  })
  expect(doc.status).toBe(201)
  const chat = await t.api('POST', `/agents/${agent.body.id}/test-chat`, { key: dev.key, workspace: customer, body: { message: 'How long is the returns window?' } })
  expect(chat.status).toBe(200)
  expect((await t.console('POST', `/workspaces/${customer}/contacts`, { phone: '+14155550123', name: 'Pat' })).status).toBe(201)
  return agent.body.id
}

const DATA: Record<string, CollectionSpec> = {
  conversations: conversationsSpec,
  messages: messagesSpec,
  contacts: contactsSpec,
  knowledgeDocuments: DOCUMENTS,
  knowledgePassages: PASSAGES,
  knowledgeSearches: SEARCHES,
  events: eventsSpec,
  usage: usageSpec,
  agents: { name: 'agents', indexes: [] },
  keys: { name: 'api_keys', indexes: [] },
}

/** How many documents each collection holds for the workspace (read straight from the store). */
async function holdings(t: TestServer, workspaceId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const [name, spec] of Object.entries(DATA)) out[name] = await (await t.server.services.store.collection(spec)).count({ workspaceId })
  return out
}

function recordHooks(t: TestServer) {
  const seen: { phase: string; event: CustomerLifecycleEvent }[] = []
  const hooks = t.server.services.customerHooks
  const offs = [
    hooks.onDeleted((event) => void seen.push({ phase: 'deleted', event })),
    hooks.onRestored((event) => void seen.push({ phase: 'restored', event })),
    hooks.onErased((event) => void seen.push({ phase: 'erased', event })),
  ]
  return {
    seen,
    off: () => {
      for (const off of offs) off()
    },
  }
}

describe('DELETE /customers/{id}', () => {
  test('archives it: 200 with archivedAt and eraseAfter; requests into it 410; its keys 401; listed as archived', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c = await newCustomer(s, dev)
    const key = (await s.api('POST', `/customers/${c}/keys`, { key: dev.key, body: { name: 'ops', scope: 'full' } })).body.key
    expect((await s.api('GET', '/agents', { key })).status).toBe(200)
    const hooks = recordHooks(s)

    const at = await now(s)
    const r = await s.api('DELETE', `/customers/${c}`, { key: dev.key })
    hooks.off()
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: c, name: 'Acme', archivedAt: new Date(at).toISOString(), eraseAfter: new Date(at + ERASE_AFTER_MS).toISOString() })
    // The lifecycle hooks (webhooks off, campaigns cancelled, sequences and callbacks stopped) fired once.
    expect(hooks.seen).toEqual([{ phase: 'deleted', event: { customerId: c, developerId: dev.id, at } }])

    const inside = await s.api('GET', '/agents', { key: dev.key, workspace: c })
    expect(inside.status).toBe(410)
    expect(inside.body).toMatchObject({ deletedAt: r.body.archivedAt, eraseAfter: r.body.eraseAfter })
    expect((await s.api('GET', '/agents', { key })).status).toBe(401)

    expect((await s.api('GET', '/customers', { key: dev.key })).body.items.map((x: any) => x.id)).not.toContain(c)
    const archived = await s.api('GET', '/customers?archived=true', { key: dev.key })
    expect(archived.body.items.map((x: any) => x.id)).toEqual([c])
    const read = await s.api('GET', `/customers/${c}`, { key: dev.key })
    expect(read.status).toBe(200)
    expect(read.body.archivedAt).toBe(r.body.archivedAt)
    expect((await s.api('GET', `/customers/${c}/keys`, { key: dev.key })).body.items).toEqual([])

    // Deleting it again, changing it or giving it keys: 409 naming the state.
    const again = await s.api('DELETE', `/customers/${c}`, { key: dev.key })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ state: 'deleted' })
    expect(again.body.error).toContain('deleted')
    expect((await s.api('PATCH', `/customers/${c}`, { key: dev.key, body: { name: 'X' } })).status).toBe(409)
    expect((await s.api('POST', `/customers/${c}/keys`, { key: dev.key, body: { name: 'x', scope: 'read' } })).status).toBe(409)

    // The actor behind it, as operators see it.
    const actor = await s.console('GET', `/actors/customerWorkspace:${c}`)
    expect(actor.status).toBe(200)
    expect(actor.body).toMatchObject({ kind: 'customerWorkspace', resourceId: c, value: 'deleted', pendingWork: false })
    expect(actor.body.deadlines).toEqual([{ name: 'erase', at: at + ERASE_AFTER_MS }])
    expect(actor.body.context).toMatchObject({ id: c, developerId: dev.id, archivedAt: at, eraseAt: at + ERASE_AFTER_MS, lastError: null })
  })

  test('refused with 409 naming the phone and messaging numbers it still holds; allowed once they are released', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c = await newCustomer(s, dev)
    await s.console('POST', `/workspaces/${c}/phone-numbers`, { number: '+14155550181', source: 'rented' })
    await s.console('POST', `/workspaces/${c}/phone-numbers`, { number: '+919800000181', source: 'brought', channel: 'chatapp' })

    const r = await s.api('DELETE', `/customers/${c}`, { key: dev.key })
    expect(r.status).toBe(409)
    expect(r.body.numbers).toEqual(['+14155550181', '+919800000181'])
    expect(r.body.state).toBe('active')
    expect(r.body.error).toContain('+14155550181')
    expect(r.body.error).toContain('+919800000181')
    expect((await s.api('GET', '/agents', { key: dev.key, workspace: c })).status).toBe(200)
    expect((await s.api('GET', `/customers/${c}`, { key: dev.key })).body.archivedAt).toBeNull()

    // Released (no route releases a number yet: straight in the store).
    const numbers = await s.server.services.store.collection({ name: 'phone_numbers', indexes: [] })
    await numbers.deleteMany({ workspaceId: c })
    expect((await s.api('DELETE', `/customers/${c}`, { key: dev.key })).status).toBe(200)
  })

  test('needs a full developer key; another developer’s customer is 404', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const other = await s.developer({ plan: 'pro' })
    const c = await newCustomer(s, dev)
    const build = (await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'b', scope: 'build' })).body.key
    expect((await s.api('DELETE', `/customers/${c}`, { key: build })).status).toBe(403)
    expect((await s.api('POST', `/customers/${c}/restore`, { key: build })).status).toBe(403)
    expect((await s.api('DELETE', `/customers/${c}`, { key: other.key })).status).toBe(404)
    expect((await s.api('POST', `/customers/${c}/restore`, { key: other.key })).status).toBe(404)
    expect((await s.api('DELETE', '/customers/org_nope', { key: dev.key })).status).toBe(404)
  })

  test('a failing lifecycle hook: 503 with retryAt; the durable retry applies it once the hook recovers', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c = await newCustomer(s, dev)
    let down = true
    let calls = 0
    const off = s.server.services.customerHooks.onDeleted(() => {
      calls++
      if (down) throw new Error('webhook store unavailable')
    }, 'switch off webhooks')
    try {
      const at = await now(s)
      const r = await s.api('DELETE', `/customers/${c}`, { key: dev.key })
      expect(r.status).toBe(503)
      expect(r.body.state).toBe('archiving')
      expect(r.body.error).toContain('switch off webhooks: webhook store unavailable')
      expect(r.body.retryAt).toBe(new Date(at + 30_000).toISOString())
      expect(r.headers.get('retry-after')).toBe('30')
      // The archive itself is written before the hooks: requests into it already answer 410.
      expect((await s.api('GET', '/agents', { key: dev.key, workspace: c })).status).toBe(410)
      const actor = (await s.console('GET', `/actors/customerWorkspace:${c}`)).body
      expect(actor.value).toBe('archiving')
      expect(actor.context.lastError).toMatchObject({ effect: 'archiveCustomer', attempts: 1 })
      expect(actor.deadlines).toEqual([{ name: 'retry', at: at + 30_000 }])
      // Asking again while it is being applied: 409 naming the state.
      expect((await s.api('DELETE', `/customers/${c}`, { key: dev.key })).body.state).toBe('archiving')

      down = false
      await advance(s, 30_000)
      const after = (await s.console('GET', `/actors/customerWorkspace:${c}`)).body
      expect(after.value).toBe('deleted')
      expect(after.context).toMatchObject({ lastError: null, retryAt: null })
      expect(after.deadlines).toEqual([{ name: 'erase', at: at + ERASE_AFTER_MS }])
      expect(calls).toBe(2)
    } finally {
      off()
    }
  })
})

describe('POST /customers/{id}/restore', () => {
  test('brings it back: 200; works again with new keys, old keys stay dead; erasure called off', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c = await newCustomer(s, dev)
    await populate(s, dev, c)
    const old = (await s.api('POST', `/customers/${c}/keys`, { key: dev.key, body: { name: 'old', scope: 'full' } })).body.key

    const active = await s.api('POST', `/customers/${c}/restore`, { key: dev.key })
    expect(active.status).toBe(409)
    expect(active.body.state).toBe('active')
    expect(active.body.error).toContain('active')

    expect((await s.api('DELETE', `/customers/${c}`, { key: dev.key })).status).toBe(200)
    await advance(s, DAY)
    const hooks = recordHooks(s)
    const r = await s.api('POST', `/customers/${c}/restore`, { key: dev.key })
    hooks.off()
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: c, archivedAt: null, eraseAfter: null })
    expect(hooks.seen.map((h) => h.phase)).toEqual(['restored'])

    expect((await s.api('GET', '/agents', { key: dev.key, workspace: c })).status).toBe(200)
    expect((await s.api('GET', '/agents', { key: old })).status).toBe(401)
    expect((await s.api('GET', `/customers/${c}/keys`, { key: dev.key })).body.items).toEqual([])
    const fresh = (await s.api('POST', `/customers/${c}/keys`, { key: dev.key, body: { name: 'new', scope: 'read' } })).body.key
    expect((await s.api('GET', '/agents', { key: fresh })).status).toBe(200)
    expect((await s.api('GET', '/customers?archived=true', { key: dev.key })).body.items).toEqual([])
    expect((await s.api('POST', `/customers/${c}/restore`, { key: dev.key })).status).toBe(409)

    // The erasure deadline went with the delete: 31 days later everything is still there.
    expect((await s.console('GET', `/actors/customerWorkspace:${c}`)).body).toMatchObject({ value: 'active', deadlines: [] })
    const before = await holdings(s, c)
    await advance(s, 31 * DAY)
    expect((await s.api('GET', `/customers/${c}`, { key: dev.key })).status).toBe(200)
    expect(await holdings(s, c)).toEqual(before)
  })
})

describe('erasure after 30 days', () => {
  test('counts toward the plan until erased; then its data is gone, it is 404 and its place is free', async () => {
    const dev = await s.developer({ plan: 'free' }) // docs/spec.md Limits: free allows 3 customers
    const gone = await newCustomer(s, dev, 'Gone')
    const kept = await newCustomer(s, dev, 'Kept')
    await newCustomer(s, dev, 'Third')
    await populate(s, dev, gone)
    await populate(s, dev, kept)
    const keptBefore = await holdings(s, kept)
    const usageBefore = (await holdings(s, gone)).usage
    expect(usageBefore).toBe(1) // the test chat's reply
    expect(await holdings(s, gone)).toMatchObject({ conversations: 1, contacts: 1, knowledgeDocuments: 1, agents: 1 })
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Fourth' } })).status).toBe(402)

    expect((await s.api('DELETE', `/customers/${gone}`, { key: dev.key })).status).toBe(200)
    // A deleted customer counts until erased (docs/spec.md Limits).
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Fourth' } })).status).toBe(402)

    await advance(s, 29 * DAY)
    expect((await s.api('GET', `/customers/${gone}`, { key: dev.key })).body.archivedAt).not.toBeNull()
    expect((await s.api('GET', '/agents', { key: dev.key, workspace: gone })).status).toBe(410)
    expect((await holdings(s, gone)).conversations).toBe(1)

    const hooks = recordHooks(s)
    await advance(s, DAY)
    hooks.off()
    expect(hooks.seen.map((h) => [h.phase, h.event.customerId])).toEqual([['erased', gone]])
    expect((await s.api('GET', `/customers/${gone}`, { key: dev.key })).status).toBe(404)
    expect((await s.api('GET', '/agents', { key: dev.key, workspace: gone })).status).toBe(404)
    expect((await s.api('GET', '/customers?archived=true', { key: dev.key })).body.items).toEqual([])
    expect(await holdings(s, gone)).toEqual({
      conversations: 0,
      messages: 0,
      contacts: 0,
      knowledgeDocuments: 0,
      knowledgePassages: 0,
      knowledgeSearches: 0,
      events: 0,
      // The developer's billing history stays (docs/api/customers.md: what erasure keeps).
      usage: usageBefore,
      agents: 0,
      keys: 0,
    })
    expect(await holdings(s, kept)).toEqual(keptBefore)
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Fourth' } })).status).toBe(201)

    const actor = (await s.console('GET', `/actors/customerWorkspace:${gone}`)).body
    expect(actor).toMatchObject({ value: 'erased', deadlines: [], pendingWork: false })
    expect((await s.api('POST', `/customers/${gone}/restore`, { key: dev.key })).status).toBe(404)
  })

  test('a restart between delete and erasure still erases on time (durable timer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-lifecycle-'))
    let t = await startTestServer({}, dir)
    try {
      const dev = await t.developer({ plan: 'pro' })
      const c = await newCustomer(t, dev)
      await populate(t, dev, c)
      expect((await t.api('DELETE', `/customers/${c}`, { key: dev.key })).status).toBe(200)
      await t.stop()

      t = await startTestServer({}, dir)
      await advance(t, ERASE_AFTER_MS - 1)
      expect((await t.api('GET', '/agents', { key: dev.key, workspace: c })).status).toBe(410)
      expect((await holdings(t, c)).conversations).toBe(1)
      await t.stop()

      t = await startTestServer({}, dir)
      await advance(t, 1)
      // The advance answers once the erasure's actor has settled or its settle bound passed; on a
      // loaded machine the erasure (every feature's collections and files) may still be finishing.
      await until(
        'erased',
        () => t.api('GET', `/customers/${c}`, { key: dev.key }),
        (r) => r.status === 404,
        10_000,
      )
      expect(await holdings(t, c)).toMatchObject({ conversations: 0, messages: 0, contacts: 0, knowledgeDocuments: 0, agents: 0 })
      expect((await t.console('GET', `/actors/customerWorkspace:${c}`)).body.value).toBe('erased')
    } finally {
      await t.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
