import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

describe('create', () => {
  test('201 with the customer; defaults; first customer makes a developer workspace', async () => {
    const dev = await s.developer()
    // Before any customer, the header is refused with 400 (Authentication rule 3, last row).
    const before = await s.api('GET', '/agents', { key: dev.key, workspace: 'org_whatever' })
    expect(before.status).toBe(400)
    expect(before.body.error).toContain('Service-Workspace')

    const r = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'Acme', externalId: null, metadata: {}, timezone: 'UTC', allottedCallLines: null, archivedAt: null, eraseAfter: null })
    expect(r.body.id).toMatch(/^org_/)
    const inside = await s.api('GET', '/agents', { key: dev.key, workspace: r.body.id })
    expect(inside.status).toBe(200)
  })

  test('field rules name the field', async () => {
    const dev = await s.developer()
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(121) }, 'name'],
      [{ name: 'A', externalId: 'has space' }, 'externalId'],
      [{ name: 'A', externalId: 'x'.repeat(129) }, 'externalId'],
      [{ name: 'A', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ name: 'A', metadata: { nested: { a: 1 } } }, 'metadata.nested'],
      [{ name: 'A', metadata: { list: [1] } }, 'metadata.list'],
      [{ name: 'A', metadata: { long: 'x'.repeat(501) } }, 'metadata.long'],
      [{ name: 'A', metadata: { ['k'.repeat(41)]: 1 } }, 'metadata'],
      [{ name: 'A', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'metadata'],
      [{ name: 'A', metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'x'.repeat(450)])) }, 'metadata'],
      [{ name: 'A', unknown: 1 }, 'unknown'],
    ]
    for (const [body, field] of cases) {
      const r = await s.api('POST', '/customers', { key: dev.key, body })
      expect({ body, status: r.status }).toEqual({ body, status: 400 })
      expect(r.body.error.startsWith(`${field}:`)).toBe(true)
    }
    // Nothing was created by any of them.
    const list = await s.api('GET', '/customers', { key: dev.key })
    expect(list.body.items).toHaveLength(0)
  })

  test('IANA time zone is kept; metadata of strings, numbers and booleans', async () => {
    const dev = await s.developer()
    const r = await s.api('POST', '/customers', { key: dev.key, body: { name: 'B', timezone: 'Asia/Kolkata', metadata: { a: 'x', b: 2, c: true } } })
    expect(r.status).toBe(201)
    expect(r.body.timezone).toBe('Asia/Kolkata')
    expect(r.body.metadata).toEqual({ a: 'x', b: 2, c: true })
  })

  test('externalId is unique among the developer’s customers → 409; other developers may reuse it', async () => {
    const a = await s.developer({ plan: 'pro' })
    const b = await s.developer({ plan: 'pro' })
    expect((await s.api('POST', '/customers', { key: a.key, body: { name: 'A1', externalId: 'crm:1' } })).status).toBe(201)
    const dup = await s.api('POST', '/customers', { key: a.key, body: { name: 'A2', externalId: 'crm:1' } })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toContain('crm:1')
    expect((await s.api('POST', '/customers', { key: b.key, body: { name: 'B1', externalId: 'crm:1' } })).status).toBe(201)
    // Several customers without externalId are fine.
    expect((await s.api('POST', '/customers', { key: a.key, body: { name: 'A3' } })).status).toBe(201)
    expect((await s.api('POST', '/customers', { key: a.key, body: { name: 'A4', externalId: null } })).status).toBe(201)
  })

  test('plan customer limit → 402 (free and payg allow 3)', async () => {
    const dev = await s.developer({ plan: 'free' })
    for (let i = 0; i < 3; i++) expect((await s.api('POST', '/customers', { key: dev.key, body: { name: `C${i}` } })).status).toBe(201)
    const r = await s.api('POST', '/customers', { key: dev.key, body: { name: 'C4' } })
    expect(r.status).toBe(402)
    expect(r.body.error).toContain('3')
  })

  test('white label workspace cannot have customers → 409', async () => {
    const dev = await s.developer({ whiteLabel: true })
    const r = await s.api('POST', '/customers', { key: dev.key, body: { name: 'X' } })
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('white label')
  })

  test('needs a full key; customer keys and the workspace header are refused', async () => {
    const dev = await s.developer()
    const build = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'b', scope: 'build' })
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'r', scope: 'read' })
    expect((await s.api('POST', '/customers', { key: build.body.key, body: { name: 'X' } })).status).toBe(403)
    expect((await s.api('POST', '/customers', { key: read.body.key, body: { name: 'X' } })).status).toBe(403)
    const c = await s.api('POST', '/customers', { key: dev.key, body: { name: 'X' } })
    const ck = await s.api('POST', `/customers/${c.body.id}/keys`, { key: dev.key, body: { name: 'k', scope: 'full' } })
    expect((await s.api('GET', '/customers', { key: ck.body.key })).status).toBe(403)
    expect((await s.api('GET', '/customers', { key: dev.key, workspace: c.body.id })).status).toBe(400)
  })

  test('Idempotency-Key: replay returns the first answer once; a different body is refused', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const headers = { 'idempotency-key': 'create-acme-1' }
    const first = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' }, headers })
    const again = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' }, headers })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const other = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Other' }, headers })
    expect(other.status).toBe(400)
    expect(other.body.error).toContain('Idempotency-Key')
    const list = await s.api('GET', '/customers', { key: dev.key })
    expect(list.body.items).toHaveLength(1)
  })

  test('Idempotency-Key: a refusal is remembered like an answer; a malformed key is a 400 naming it', async () => {
    const dev = await s.developer({ plan: 'pro' })
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Taken', externalId: 'dup-1' } })).status).toBe(201)
    const headers = { 'idempotency-key': 'refused-1' }
    const refused = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Second', externalId: 'dup-1' }, headers })
    expect(refused.status).toBe(409)
    const replay = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Second', externalId: 'dup-1' }, headers })
    expect(replay.status).toBe(409)
    expect(replay.body).toEqual(refused.body)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    const bad = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Bad key' }, headers: { 'idempotency-key': 'x'.repeat(300) } })
    expect(bad.status).toBe(400)
    expect(bad.body.field).toBe('Idempotency-Key')
  })
})

describe('list', () => {
  test('newest first, cursor pages lose and repeat nothing; limit bounds; filters', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const ids: string[] = []
    for (let i = 0; i < 7; i++) {
      const r = await s.api('POST', '/customers', { key: dev.key, body: { name: `C${i}`, externalId: `e${i}` } })
      ids.push(r.body.id)
      await s.console('POST', '/clock/advance', { ms: 1000 })
    }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3'
      const page: any = await s.api('GET', `/customers${q}`, { key: dev.key })
      expect(page.status).toBe(200)
      expect(page.body.items.length).toBeLessThanOrEqual(3)
      seen.push(...page.body.items.map((c: any) => c.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())

    expect((await s.api('GET', '/customers?limit=0', { key: dev.key })).status).toBe(400)
    expect((await s.api('GET', '/customers?limit=101', { key: dev.key })).status).toBe(400)
    const bad = await s.api('GET', '/customers?cursor=garbage', { key: dev.key })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toStartWith('cursor:')

    const byExt = await s.api('GET', '/customers?externalId=e3', { key: dev.key })
    expect(byExt.body.items.map((c: any) => c.id)).toEqual([ids[3]])

    const all = (await s.api('GET', '/customers?limit=100', { key: dev.key })).body.items
    const pivot = all.find((c: any) => c.id === ids[3]).createdAt
    const after = await s.api('GET', `/customers?createdAfter=${encodeURIComponent(pivot)}&limit=100`, { key: dev.key })
    expect(after.body.items.map((c: any) => c.id)).toEqual([ids[6], ids[5], ids[4], ids[3]])
    const before = await s.api('GET', `/customers?createdBefore=${encodeURIComponent(pivot)}&limit=100`, { key: dev.key })
    expect(before.body.items.map((c: any) => c.id)).toEqual([ids[2], ids[1], ids[0]])
    const dateOnly = await s.api('GET', `/customers?createdBefore=2000-01-01`, { key: dev.key })
    expect(dateOnly.body.items).toHaveLength(0)
    const badDate = await s.api('GET', '/customers?createdAfter=yesterday', { key: dev.key })
    expect(badDate.status).toBe(400)
    expect(badDate.body.error).toStartWith('createdAfter:')
    expect((await s.api('GET', '/customers?archived=true', { key: dev.key })).body.items).toHaveLength(0)
  })
})

describe('read and patch', () => {
  test('read adds counts and spendThisMonthMicro', async () => {
    const dev = await s.developer()
    const c = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })
    await s.api('POST', '/agents', { key: dev.key, workspace: c.body.id, body: { name: 'Helper' } })
    await s.console('POST', `/workspaces/${c.body.id}/contacts`, { phone: '+14155550100' })
    await s.console('POST', `/workspaces/${c.body.id}/phone-numbers`, { number: '+14155550199', source: 'rented' })
    const r = await s.api('GET', `/customers/${c.body.id}`, { key: dev.key })
    expect(r.status).toBe(200)
    expect(r.body.counts).toEqual({ agents: 1, phoneNumbers: 1, contacts: 1 })
    // The rented number's first month of rent (src/catalog/prices.ts, USD) is this month's spend.
    expect(r.body.spendThisMonthMicro).toBe(1_500_000)
  })

  test('metadata merges: omitted kept, null removes; externalId null clears; unknown id 404', async () => {
    const dev = await s.developer()
    const c = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme', externalId: 'x1', metadata: { a: 1, b: 'two', c: true } } })
    const r = await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, body: { metadata: { b: null, d: 'new' }, externalId: null, allottedCallLines: 2, name: 'Acme Ltd' } })
    expect(r.status).toBe(200)
    expect(r.body.metadata).toEqual({ a: 1, c: true, d: 'new' })
    expect(r.body.externalId).toBeNull()
    expect(r.body.allottedCallLines).toBe(2)
    expect(r.body.name).toBe('Acme Ltd')
    // x1 is free again.
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Other', externalId: 'x1' } })).status).toBe(201)
    expect((await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, body: { externalId: 'x1' } })).status).toBe(409)
    expect((await s.api('PATCH', '/customers/org_nope', { key: dev.key, body: { name: 'n' } })).status).toBe(404)
    expect((await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, body: { allottedCallLines: -1 } })).body.error).toStartWith('allottedCallLines:')
  })
})

describe('customer keys', () => {
  test('created once-shown, listed without values, revoked at once, only inside its customer', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c1 = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'One' } })).body
    const c2 = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Two' } })).body
    const k = await s.api('POST', `/customers/${c1.id}/keys`, { key: dev.key, body: { name: 'ops', scope: 'build' } })
    expect(k.status).toBe(201)
    expect(k.body.key).toStartWith(k.body.prefix)
    const list = await s.api('GET', `/customers/${c1.id}/keys`, { key: dev.key })
    expect(list.body.items).toHaveLength(1)
    expect(JSON.stringify(list.body)).not.toContain(k.body.key)
    expect(list.body.items[0]).toMatchObject({ id: k.body.id, name: 'ops', prefix: k.body.prefix, scope: 'build' })

    // The customer key works inside its customer, with or without the header, and nowhere else.
    const own = await s.api('POST', '/agents', { key: k.body.key, body: { name: 'Inside' } })
    expect(own.status).toBe(201)
    const seenByDev = await s.api('GET', '/agents', { key: dev.key, workspace: c1.id })
    expect(seenByDev.body.items.map((a: any) => a.id)).toContain(own.body.id)
    expect((await s.api('GET', '/agents', { key: dev.key })).body.items.map((a: any) => a.id)).not.toContain(own.body.id)
    expect((await s.api('GET', '/agents', { key: k.body.key, workspace: c2.id })).status).toBe(404)
    expect((await s.api('GET', '/agents', { key: k.body.key, workspace: dev.id })).status).toBe(404)

    // lastUsedAt is recorded.
    const after = await s.api('GET', `/customers/${c1.id}/keys`, { key: dev.key })
    expect(after.body.items[0].lastUsedAt).not.toBeNull()

    const del = await s.api('DELETE', `/customers/${c1.id}/keys/${k.body.id}`, { key: dev.key })
    expect(del.status).toBe(204)
    expect((await s.api('GET', '/agents', { key: k.body.key })).status).toBe(401)
    expect((await s.api('GET', `/customers/${c1.id}/keys`, { key: dev.key })).body.items).toHaveLength(0)
    expect((await s.api('DELETE', `/customers/${c1.id}/keys/${k.body.id}`, { key: dev.key })).status).toBe(404)
    // A key of one customer cannot be revoked through another.
    const k2 = await s.api('POST', `/customers/${c2.id}/keys`, { key: dev.key, body: { name: 'x', scope: 'read' } })
    expect((await s.api('DELETE', `/customers/${c1.id}/keys/${k2.body.id}`, { key: dev.key })).status).toBe(404)
    expect((await s.api('POST', `/customers/${c1.id}/keys`, { key: dev.key, body: { name: 'x', scope: 'admin' } })).status).toBe(400)
  })

  test('the keys list is a v1 list: { items, nextCursor }, newest first, with limit and cursor', async () => {
    const dev = await s.developer({ plan: 'pro' })
    const c = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Many keys' } })).body
    const made: string[] = []
    for (const name of ['first', 'second', 'third']) made.push((await s.api('POST', `/customers/${c.id}/keys`, { key: dev.key, body: { name, scope: 'read' } })).body.id)
    const all = await s.api('GET', `/customers/${c.id}/keys`, { key: dev.key })
    expect(all.body.nextCursor).toBeNull()
    expect(all.body.items.map((k: any) => k.id)).toEqual([...made].reverse())
    const one = await s.api('GET', `/customers/${c.id}/keys?limit=2`, { key: dev.key })
    expect(one.body.items.map((k: any) => k.name)).toEqual(['third', 'second'])
    const two = await s.api('GET', `/customers/${c.id}/keys?limit=2&cursor=${one.body.nextCursor}`, { key: dev.key })
    expect(two.body).toMatchObject({ items: [{ name: 'first' }], nextCursor: null })
    expect((await s.api('GET', `/customers/${c.id}/keys?limit=0`, { key: dev.key })).body).toMatchObject({ field: 'limit' })
    expect((await s.api('GET', `/customers/${c.id}/keys?cursor=nonsense`, { key: dev.key })).body).toMatchObject({ field: 'cursor' })
  })
})

describe('review fixes', () => {
  test('time zones must be IANA names: raw offsets are refused', async () => {
    const dev = await s.developer()
    for (const timezone of ['+05:30', '-0800', 'GMT+5']) {
      const r = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Tz', timezone } })
      expect({ timezone, status: r.status }).toEqual({ timezone, status: 400 })
      expect(r.body.error).toStartWith('timezone:')
    }
    // A link name is still an IANA name.
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: 'Tz', timezone: 'Asia/Calcutta' } })).status).toBe(201)
  })

  test('blank names and a "__proto__" metadata key are refused, not stored or dropped', async () => {
    const dev = await s.developer()
    expect((await s.api('POST', '/customers', { key: dev.key, body: { name: '   ' } })).body.error).toBe('name: must not be blank')
    const c = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Proto' } })
    const proto = await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, raw: '{"metadata":{"__proto__":"x"}}' })
    expect(proto.status).toBe(400)
    expect(proto.body.field).toBe('metadata.__proto__')
    expect((await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, body: { name: ' ' } })).status).toBe(400)
  })

  test('the console revokes a developer key at once', async () => {
    const dev = await s.developer()
    const k = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'temp', scope: 'read' })
    expect((await s.api('GET', '/agents', { key: k.body.key })).status).toBe(200)
    expect((await s.console('DELETE', `/workspaces/${dev.id}/keys/${k.body.id}`)).status).toBe(204)
    expect((await s.api('GET', '/agents', { key: k.body.key })).status).toBe(401)
    expect((await s.console('DELETE', `/workspaces/${dev.id}/keys/${k.body.id}`)).status).toBe(404)
  })
})
