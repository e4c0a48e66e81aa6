import { expect, test } from 'bun:test'
import { PrincipalCache } from '../../../src/features/workspaces/principal-cache'

const principal = (keyId: string, ws: string) => ({ key: { id: keyId }, home: { id: ws }, developer: { id: ws } }) as any

test('a principal read before an invalidation is not cached after it', () => {
  const cache = new PrincipalCache()
  const readAt = cache.generation
  cache.dropKey('key_1') // a revoke lands while the store read is in flight
  cache.set('h1', principal('key_1', 'ws_1'), readAt)
  expect(cache.get('h1')).toBeUndefined()
  cache.set('h1', principal('key_1', 'ws_1'), cache.generation)
  expect(cache.get('h1')).toBeDefined()
  cache.dropWorkspace('ws_1')
  expect(cache.get('h1')).toBeUndefined()
})
