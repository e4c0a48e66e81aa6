/** Legacy endpoint numbers: per account, never reused, safe under racing creates, pruned. */
import { expect, test } from 'bun:test'
import { EndpointNumbers, type LegacyNumberDoc, legacyNumbersSpec } from '../../../src/features/webhooks/endpoint-numbers'
import { openSqliteStore } from '../../../src/store/sqlite'
import { WorkspaceCollection } from '../../../src/store/workspace-scoped'

async function numbers(held: Record<string, number> = {}) {
  const store = await openSqliteStore(':memory:')
  const claims = await store.collection<LegacyNumberDoc>(legacyNumbersSpec)
  return { claims, numbers: new EndpointNumbers(new WorkspaceCollection(claims), async (ws) => held[ws] ?? 0) }
}

test('each account counts from 1; racing claims get distinct numbers; only the mark is kept', async () => {
  const { claims, numbers: n } = await numbers()
  const raced = await Promise.all(Array.from({ length: 10 }, () => n.claim('ws_a')))
  expect(raced.toSorted((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  expect(await n.claim('ws_b')).toBe(1)
  expect((await claims.find({ workspaceId: 'ws_a' })).map((c) => c.number)).toEqual([10])
})

test('the mark never goes down, whatever endpoints are held', async () => {
  const held: Record<string, number> = { ws_a: 3 }
  const { numbers: n } = await numbers(held)
  // Endpoints from before claims existed set the floor.
  expect(await n.claim('ws_a')).toBe(4)
  held.ws_a = 0 // every endpoint deleted
  expect(await n.claim('ws_a')).toBe(5)
})
