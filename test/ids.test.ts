import { expect, test } from 'bun:test'
import { newId, randomId } from '../src/ids'

test('ids carry their prefix and sort in creation order, also within one millisecond', () => {
  const ids = Array.from({ length: 5000 }, () => newId('ag'))
  expect(ids.every((id) => /^ag_[0-9a-z]{20}$/.test(id))).toBe(true)
  expect([...ids].sort()).toEqual(ids)
  expect(new Set(ids).size).toBe(ids.length)
})

test('randomId has the requested length and alphabet', () => {
  expect(randomId(32)).toMatch(/^[0-9a-hjkmnp-tv-z]{32}$/)
})

test('API key hashes are plain SHA-256 hex (stored hashes stay valid whichever hasher computes them)', async () => {
  const { createHash } = await import('node:crypto')
  const { hashKey } = await import('../src/features/workspaces/keys')
  for (const key of ['sk_abc', `sk_${'x'.repeat(32)}`, '']) expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'))
})
