/**
 * Knowledge across instances: two services on one Redis and one store. Each caches an agent's
 * search index in memory; a document added or deleted on one must be seen by the other's next
 * search (features/knowledge/sync.ts), not after its cache happens to be evicted.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { knowledgeFeature } from '../../src/features/knowledge'
import { startRedis } from '../support/redis'
import { startTestServer, type TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

const QUESTION = 'What is your returns window?'
// Pub/sub crosses Redis in about a millisecond; this bounds a loaded test machine.
const PROPAGATION_MS = 3_000

describeWithRedis('knowledge across instances on one Redis', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>
  let a: TestServer
  let b: TestServer
  let dir: string
  beforeAll(async () => {
    redis = await startRedis()
    dir = mkdtempSync(join(tmpdir(), 'svc-knowledge-'))
    const env = { REDIS_URL: redis.url, CONSOLE_TOKEN: 'console-token-for-knowledge-instances', SQLITE_LOCKING: 'shared' }
    a = await startTestServer(env, dir)
    b = await startTestServer(env, dir)
  })
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('a document added on A is found by B; deleted on A, B no longer cites it', async () => {
    const dev = await a.developer()
    const agent = (await a.api('POST', '/agents', { key: dev.key, body: { name: 'Librarian' } })).body.id
    const chatOnB = async () => {
      await b.console('POST', '/clock/advance', { ms: 2_000 })
      return b.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: QUESTION } })
    }
    // B builds and caches the agent's (empty) index.
    expect((await chatOnB()).body.tools[0].output).toEqual({ found: false, passages: [] })
    expect(b.server.services.of(knowledgeFeature).knowledge.cachedAgents).toBe(1)

    const doc = await a.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Our returns window is 30 days from delivery.', title: 'Returns' } })
    expect(doc.status).toBe(201)
    await until('B to find the document', async () => (await b.server.services.of(knowledgeFeature).knowledge.search(dev.id, agent, QUESTION)).found, { withinMs: PROPAGATION_MS, everyMs: 20 })
    const cited = await chatOnB()
    expect(cited.body.reply).toContain('30 days')
    expect(cited.body.reply).toContain('(Source: Returns)')

    expect((await a.api('DELETE', `/agents/${agent}/knowledge/${doc.body.id}`, { key: dev.key })).status).toBe(204)
    await until('B to stop citing the document', async () => !(await b.server.services.of(knowledgeFeature).knowledge.search(dev.id, agent, QUESTION)).hits.some((h) => h.documentId === doc.body.id), {
      withinMs: PROPAGATION_MS,
      everyMs: 20,
    })
    const after = await chatOnB()
    expect(after.body.reply).not.toContain('Source: Returns')
    expect(after.body.tools[0].output).toEqual({ found: false, passages: [] })
  })
})
