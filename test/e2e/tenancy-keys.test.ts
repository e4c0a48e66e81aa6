/**
 * Keys over every v1 route: no key, a malformed, wrong or revoked key answers 401, and a customer
 * key on the customer-management routes answers 403. The world and the route list:
 * test/support/tenancy.ts. Workspace isolation: tenancy-isolation.test.ts.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomId } from '../../src/ids'
import { isCustomerManagement, startTenants, type Tenants } from '../support/tenancy'

let t: Tenants

beforeAll(async () => {
  t = await startTenants()
})

afterAll(async () => {
  await t?.server.stop()
})

describe('keys across every v1 route', () => {
  test('no key, a malformed, wrong or revoked key answers 401 on every route', async () => {
    const wrong = `sk_${randomId(32)}`
    const attempts: [string, { key?: string; workspace?: string; headers?: Record<string, string> }][] = [
      ['no key', {}],
      ['no key, with Service-Workspace', { workspace: t.B.b1 }],
      ['empty bearer', { headers: { authorization: 'Bearer ' } }],
      ['basic scheme', { headers: { authorization: `Basic ${btoa('user:pass')}` } }],
      ['key without scheme', { headers: { authorization: t.A.dev.key } }],
      ['unknown key', { key: wrong }],
      ['A key with a character added', { key: `${t.A.dev.key}x` }],
      ['revoked developer key', { key: t.A.revokedDevKey }],
      ['revoked customer key', { key: t.A.revokedCustomerKey }],
    ]
    const problems: string[] = []
    for (const route of t.routes) {
      // A's own ids: with a working key these would succeed, so only the key decides the answer.
      const ids = route.kinds.map((k) => t.A.dev.own[k])
      for (const [what, opts] of attempts) {
        const problem = await t.check(what, route, ids, 401, opts)
        if (problem) problems.push(problem)
      }
    }
    expect(problems).toEqual([])
  })

  test('a customer key on the customer-management routes answers 403', async () => {
    const problems: string[] = []
    const managed = t.routes.filter(isCustomerManagement)
    expect(managed.length).toBeGreaterThan(0)
    for (const route of managed) {
      const problem = await t.check(
        'A1 key on /customers',
        route,
        route.kinds.map((k) => t.A.dev.own[k]),
        403,
        { key: t.A.a1Key.key },
      )
      if (problem) problems.push(problem)
    }
    expect(problems).toEqual([])
  })

  // An answer the v1 document does not list is an undocumented error: clients cannot plan for it.
  test('every status met above is documented for its operation', async () => {
    expect(await t.undocumented()).toEqual([])
  })
})
