/** sync.ts on the local coordination: two services on one store, as two instances would be. */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../src/clock'
import { openCoordination } from '../../../src/coordination'
import { KnowledgeService } from '../../../src/features/knowledge/service'
import { KNOWLEDGE_CHANNEL, syncKnowledgeAcrossInstances } from '../../../src/features/knowledge/sync'
import { createLogger } from '../../../src/logger'
import { openSqliteStore } from '../../../src/store/sqlite'
import { until } from '../../support/until'

const dir = mkdtempSync(join(tmpdir(), 'knowledge-sync-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('every add, remove and agent cascade drops the other instance’s cached index, not the sender’s', async () => {
  const store = await openSqliteStore(join(dir, 'k.db'))
  const coordination = await openCoordination({ dataDir: dir })
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'))
  const [a, b] = [await KnowledgeService.open(store, clock), await KnowledgeService.open(store, clock)]
  const stops = [await syncKnowledgeAcrossInstances(a, coordination, createLogger('silent')), await syncKnowledgeAcrossInstances(b, coordination, createLogger('silent'))]
  const heard: string[] = []
  const spy = await coordination.subscribe(KNOWLEDGE_CHANNEL, (m) => void heard.push(m))
  // The spy subscribed last: once it has heard the nth change, both services have had it too.
  const heardChanges = (n: number) =>
    until(
      `change ${n} broadcast`,
      async () => heard.length,
      (k) => k === n,
    )
  try {
    await Promise.all([a.search('ws', 'ag', 'returns'), b.search('ws', 'ag', 'returns')])
    expect([a.cachedAgents, b.cachedAgents]).toEqual([1, 1])

    const doc = await a.addText({ workspaceId: 'ws', agentId: 'ag', text: 'Our returns window is 30 days.', title: 'Returns' })
    await heardChanges(1)
    expect([a.cachedAgents, b.cachedAgents]).toEqual([1, 0])
    expect((await b.search('ws', 'ag', 'returns window')).found).toBe(true)

    await a.remove('ws', 'ag', doc.id)
    await heardChanges(2)
    expect(b.cachedAgents).toBe(0)
    expect((await b.search('ws', 'ag', 'returns window')).hits).toEqual([])

    await a.removeAllForAgent('ws', 'ag')
    await heardChanges(3)
    expect(heard.map((m) => JSON.parse(m)).map(({ workspaceId, agentId }) => ({ workspaceId, agentId }))).toEqual(Array(3).fill({ workspaceId: 'ws', agentId: 'ag' }))
    expect(b.cachedAgents).toBe(0)
  } finally {
    await spy()
    for (const stop of stops) await stop()
    await coordination.close()
    await store.close()
  }
})
