import { describe, expect, test } from 'bun:test'
import { decodeCursor, encodeCursor } from '../../src/http/pagination'
import { apiErrorOf } from '../../src/http/refusals'
import { checkInstant } from '../../src/instant'

const refused = (f: () => unknown, field: string) => {
  let caught: unknown
  try {
    f()
  } catch (e) {
    caught = e
  }
  const answer = apiErrorOf(caught)
  expect(answer?.status).toBe(400)
  expect(answer?.message).toStartWith(`${field}:`)
  expect(answer?.extra).toEqual({ field })
}

describe('checkInstant', () => {
  test('dates and instants in any offset become UTC instants with milliseconds', () => {
    expect(checkInstant('2026-11-21', 'since')).toBe('2026-11-21T00:00:00.000Z')
    expect(checkInstant('2026-11-21T09:30:00Z', 'since')).toBe('2026-11-21T09:30:00.000Z')
    expect(checkInstant('2026-11-21T09:30:00+05:30', 'since')).toBe('2026-11-21T04:00:00.000Z')
    expect(checkInstant('2024-02-29', 'since')).toBe('2024-02-29T00:00:00.000Z')
  })
  test('days that do not exist and other shapes are refused naming the field', () => {
    for (const bad of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-11-21T25:00:00Z', 'yesterday', '21/11/2026', '2026-11-21 09:30']) {
      refused(() => checkInstant(bad, 'since'), 'since')
    }
  })
})

describe('cursors', () => {
  test('round trip; anything this API did not hand out is refused', () => {
    const after = { createdAt: '2026-11-21T09:30:00.000Z', id: 'ag_01m7yc9hd8vj724cwbjy' }
    expect(decodeCursor(encodeCursor(after))).toEqual(after)
    const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
    for (const bad of [forged(['x', 'y']), forged(['2026-11-21', 'a']), forged(['2026-11-21T09:30:00.000Z', 'a b']), forged({}), 'not base64 json']) {
      refused(() => decodeCursor(bad), 'cursor')
    }
    expect(decodeCursor(undefined)).toBeNull()
  })
})
