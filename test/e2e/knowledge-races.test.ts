/**
 * Knowledge added while its agent is being deleted, end to end: the add checks the agent before a
 * page fetch that can take seconds, so the delete's cascade can run meanwhile. The add must then
 * answer 404 and leave no document or passage behind for the deleted agent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { agentsFeature } from '../../src/features/agents'
import { startTestServer, type TestServer } from '../support/server'

const SLOW_PAGE_MS = 1_000

let server: TestServer
let dev: { id: string; key: string }
let site: ReturnType<typeof Bun.serve>
/** Resolved once per request the slow page receives, so a test knows the add is mid-fetch. */
let requested: () => void = () => {}

beforeAll(async () => {
  // Private targets allowed, so the service may fetch the page on 127.0.0.1.
  server = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  dev = await server.developer({ name: 'Knowledge races' })
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch() {
      requested()
      await Bun.sleep(SLOW_PAGE_MS)
      return new Response('<html><head><title>Opening hours</title></head><body><p>We open at 7 am every day and close at 6 pm.</p></body></html>', {
        headers: { 'content-type': 'text/html' },
      })
    },
  })
})

afterAll(async () => {
  site?.stop(true)
  await server?.stop()
})

const createAgent = async () => (await server.api('POST', '/agents', { key: dev.key, body: { name: 'Librarian' } })).body.id as string

async function storedFor(agent: string): Promise<{ documents: number; passages: number }> {
  const collection = (name: string) => server.server.services.store.collection({ name, indexes: [] })
  return {
    documents: await (await collection('knowledge_documents')).count({ agentId: agent }),
    passages: await (await collection('knowledge_passages')).count({ agentId: agent }),
  }
}

describe('adding knowledge while the agent is deleted', () => {
  test('the agent is deleted during the page fetch: the add answers 404 and nothing is stored', async () => {
    const agent = await createAgent()
    const fetching = new Promise<void>((done) => (requested = done))
    const add = server.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: `http://127.0.0.1:${site.port}/hours` } })
    await fetching
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    const answer = await add
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: { error: `no agent ${agent} in this workspace` } })
    expect(await storedFor(agent)).toEqual({ documents: 0, passages: 0 })
  })

  test('an add storing while the delete cascade runs (the agent still readable) answers 404 and nothing is stored', async () => {
    const agent = await createAgent()
    const fetching = new Promise<void>((done) => (requested = done))
    const add = server.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: `http://127.0.0.1:${site.port}/hours` } })
    await fetching
    // Registered after every cascade the server has (knowledge's included): it holds the delete
    // there, after the knowledge is swept and before the agent's own row goes, until the add is
    // answered. So the add stores and checks while the agent still reads as present.
    server.server.services.of(agentsFeature).agents.onDelete(async (doc) => {
      if (doc.id === agent) await Promise.race([add, Bun.sleep(5 * SLOW_PAGE_MS)])
    })
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    const answer = await add
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: { error: `no agent ${agent} in this workspace` } })
    expect(await storedFor(agent)).toEqual({ documents: 0, passages: 0 })
  })

  test('pasted text added from inside the delete cascade answers 404 and nothing is stored', async () => {
    const agent = await createAgent()
    let during: { status: number; body: unknown } | null = null
    server.server.services.of(agentsFeature).agents.onDelete(async (doc) => {
      if (doc.id !== agent) return
      const r = await server.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'We open at 7 am every day.' } })
      during = { status: r.status, body: r.body }
    })
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    expect(during!).toEqual({ status: 404, body: { error: `no agent ${agent} in this workspace` } })
    expect(await storedFor(agent)).toEqual({ documents: 0, passages: 0 })
  })

  test('an add for an agent that stays is unaffected; deleting the agent afterwards clears it', async () => {
    const agent = await createAgent()
    const added = await server.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: `http://127.0.0.1:${site.port}/hours` } })
    expect(added.status).toBe(201)
    expect(added.body).toMatchObject({ status: 'ready', title: 'Opening hours' })
    expect((await storedFor(agent)).documents).toBe(1)
    expect((await server.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
    expect(await storedFor(agent)).toEqual({ documents: 0, passages: 0 })
  })
})
