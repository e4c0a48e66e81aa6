/** The brake on refused credentials, on its own: counting per address, the refusal, the window's end. */
import { expect, test } from 'bun:test'
import { openLocalCoordination } from '../../src/coordination/local'
import { AuthThrottle } from '../../src/http/auth-throttle'
import { apiErrorOf } from '../../src/http/refusals'

const keyed = () => new Request('http://x/api/v1/agents', { headers: { authorization: 'Bearer sk_wrong' } })

test('past the limit an address is refused, with the window in its headers, until the window ends', async () => {
  let now = Date.parse('2026-11-27T10:00:00.000Z')
  const throttle = new AuthThrottle(await openLocalCoordination(':memory:'), 3, () => now)
  const fail = async (client: string) => {
    const request = keyed()
    const refused = throttle.refusal(request, () => client)
    return refused ?? (await throttle.failed(request, client))
  }
  expect([await fail('10.0.0.1'), await fail('10.0.0.1'), await fail('10.0.0.1')]).toEqual([null, null, null])
  const fourth = await fail('10.0.0.1')
  expect(apiErrorOf(fourth)?.status).toBe(429)
  expect(apiErrorOf(fourth)?.headers).toEqual({
    'x-ratelimit-limit': '3',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(Date.parse('2026-11-27T10:01:00.000Z') / 1000),
    'retry-after': '60',
  })
  // Refused before its key is looked at, whatever the key; another address is not.
  now += 30_000
  expect(throttle.refusal(keyed(), () => '10.0.0.1')?.retryAfterSeconds).toBe(30)
  expect(throttle.refusal(keyed(), () => '10.0.0.2')).toBeNull()
  // A request without credentials is never refused by it (a visitor, a health check).
  expect(throttle.refusal(new Request('http://x/health'), () => '10.0.0.1')).toBeNull()
  now += 30_000
  expect(throttle.refusal(keyed(), () => '10.0.0.1')).toBeNull()
  expect(await fail('10.0.0.1')).toBeNull()
})

test('0 turns the brake off', async () => {
  const throttle = new AuthThrottle(await openLocalCoordination(':memory:'), 0)
  for (let i = 0; i < 10; i++) {
    const request = keyed()
    expect(throttle.refusal(request, () => '10.0.0.1')).toBeNull()
    expect(await throttle.failed(request, '10.0.0.1')).toBeNull()
  }
})

test('the address is read only while some address is past the limit', async () => {
  const throttle = new AuthThrottle(await openLocalCoordination(':memory:'), 1)
  let reads = 0
  const clientOf = () => {
    reads++
    return '10.0.0.1'
  }
  expect(throttle.refusal(keyed(), clientOf)).toBeNull()
  expect(reads).toBe(0)
  await throttle.failed(keyed(), '10.0.0.1')
  expect(await throttle.failed(keyed(), '10.0.0.1')).not.toBeNull()
  expect(throttle.refusal(keyed(), clientOf)?.reason).toBe('too_many')
  expect(reads).toBe(1)
})
