import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
})
afterAll(() => s.stop())

const create = (body: unknown, key = dev.key) => s.api('POST', '/agents', { key, body })

describe('create', () => {
  test('only name is required; starter persona, widget key, voice channel', async () => {
    const r = await create({ name: 'Ava' })
    expect(r.status).toBe(201)
    const a = r.body
    expect(a.id).toMatch(/^ag_/)
    expect(a.instructions).toContain('Ava')
    expect(a.webKey).toMatch(/^wk_/)
    expect(a.model).toBe('local')
    expect(a.voice).toMatchObject({ answersCalls: true, voice: 'aria', language: null, maxCallSeconds: null, surfaces: ['web'], phoneNumber: null })
    expect(a.widget).toMatchObject({ theme: 'modern', height: 600, accent: null })
    expect(a.collectFields).toEqual([])
    expect(a.steps).toEqual([])
    expect(a.temperature).toBe(0.7) // the default
    expect(a.createdAt).toBeString()
    expect(a.workspaceId).toBeUndefined()
    const got = await s.api('GET', `/agents/${a.id}`, { key: dev.key })
    expect(got.body).toEqual(a)
  })

  test('length and shape rules name the field; nothing is created', async () => {
    const before = (await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: 'A' }, 'name'],
      [{ name: 'x'.repeat(61) }, 'name'],
      [{ name: 'Ok', instructions: 'x'.repeat(8001) }, 'instructions'],
      [{ name: 'Ok', greeting: 'x'.repeat(201) }, 'greeting'],
      [{ name: 'Ok', businessDescription: 'x'.repeat(201) }, 'businessDescription'],
      [{ name: 'Ok', steps: Array.from({ length: 13 }, () => ({ title: 't', detail: 'd' })) }, 'steps'],
      [{ name: 'Ok', steps: [{ title: 't' }] }, 'steps[0].detail'],
      [{ name: 'Ok', widget: { height: 419 } }, 'widget.height'],
      [{ name: 'Ok', widget: { height: 901 } }, 'widget.height'],
      [{ name: 'Ok', widget: { theme: 'dark' } }, 'widget.theme'],
      [{ name: 'Ok', widget: { accent: 'red' } }, 'widget.accent'],
      [{ name: 'Ok', voice: { maxCallSeconds: 59 } }, 'voice.maxCallSeconds'],
      [{ name: 'Ok', voice: { maxCallSeconds: 1201 } }, 'voice.maxCallSeconds'],
      [{ name: 'Ok', voice: { endpointingMs: 199 } }, 'voice.endpointingMs'],
      [{ name: 'Ok', voice: { endpointingMs: 3001 } }, 'voice.endpointingMs'],
      [{ name: 'Ok', voice: { voice: 'nobody' } }, 'voice.voice'],
      [{ name: 'Ok', voice: { language: 'Klingon' } }, 'voice.language'],
      [{ name: 'Ok', language: 'Klingon' }, 'language'],
      [{ name: 'Ok', secondLanguage: 'auto' }, 'secondLanguage'],
      [{ name: 'Ok', model: 'gpt-99' }, 'model'],
      [{ name: 'Ok', collectFields: Array.from({ length: 31 }, (_, i) => ({ name: `f${i}` })) }, 'collectFields'],
      [{ name: 'Ok', collectFields: [{ name: 'a' }, { name: 'A' }] }, 'collectFields[1].name'],
      [{ name: 'Ok', collectFields: [{ name: 'a', type: 'blob' }] }, 'collectFields[0].type'],
      [{ name: 'Ok', escalation: { onRequest: 'yes' } }, 'escalation.onRequest'],
      [{ name: 'Ok', extra: true }, 'extra'],
    ]
    for (const [body, field] of cases) {
      const r = await create(body)
      expect({ body, status: r.status }).toEqual({ body, status: 400 })
      expect({ body, error: r.body.error.split(':')[0] }).toEqual({ body, error: field })
    }
    expect((await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length).toBe(before)
  })

  test('temperature and maxReplyTokens are clamped, not refused', async () => {
    const hi = await create({ name: 'Hot', temperature: 7, maxReplyTokens: 5000 })
    expect(hi.body).toMatchObject({ temperature: 2, maxReplyTokens: 800 })
    const lo = await create({ name: 'Cold', temperature: -1, maxReplyTokens: 3 })
    expect(lo.body).toMatchObject({ temperature: 0, maxReplyTokens: 100 })
  })

  test('full body: every field kept; collectFields type defaults to text; languages canonical', async () => {
    const body = {
      name: 'Full',
      instructions: 'Be brief.',
      greeting: 'Hello!',
      businessDescription: 'A bakery',
      model: 'gpt-4o',
      temperature: 0.3,
      maxReplyTokens: 250,
      language: 'hindi',
      secondLanguage: 'English',
      escalation: { onNoAnswer: false },
      captureLeads: false,
      scheduleCallbacks: true,
      steps: [{ title: 'Greet', detail: 'Say hi' }],
      widget: { theme: 'classic', accent: '#ff8800', height: 500, welcomeScreen: false, welcomeCollectLeads: true },
      voice: { answersCalls: false, voice: 'meera', language: 'Tamil', summariseCalls: false, detectMachines: true, recordCalls: true, maxCallSeconds: 300 },
      collectFields: [{ name: 'budget', type: 'number', description: 'monthly budget' }, { name: 'city' }],
    }
    const r = await create(body)
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      ...body,
      language: 'Hindi',
      escalation: { onNoAnswer: false, onRequest: true },
      voice: { ...body.voice, surfaces: ['web'], phoneNumber: null },
      collectFields: [
        { name: 'budget', type: 'number', description: 'monthly budget', choices: null },
        { name: 'city', type: 'text', description: null, choices: null },
      ],
    })
  })

  test('model refusal: plan and call speed apply only when changing to the model', async () => {
    const free = await s.developer({ plan: 'free' })
    const r = await create({ name: 'Cheap', model: 'gpt-4o' }, free.key)
    expect(r.status).toBe(400)
    expect(r.body.field).toBe('model')
    expect(r.body.error).toContain('payg')
    // Too slow for calls while the agent answers calls; fine for a chat-only agent.
    expect((await create({ name: 'Slow', model: 'o3' })).status).toBe(400)
    const chat = await create({ name: 'Thinker', model: 'o3', voice: { answersCalls: false } })
    expect(chat.status).toBe(201)
    // An agent keeps a model after the plan no longer includes it; other edits still work.
    const pro = await s.developer({ plan: 'pro' })
    const a = await create({ name: 'Keeper', model: 'claude-sonnet-4' }, pro.key)
    expect(a.status).toBe(201)
    await s.console('PATCH', `/workspaces/${pro.id}`, { plan: 'payg' })
    const edit = await s.api('PATCH', `/agents/${a.body.id}`, { key: pro.key, body: { greeting: 'Hey', model: 'claude-sonnet-4' } })
    expect(edit.status).toBe(200)
    expect(edit.body.model).toBe('claude-sonnet-4')
    const back = await s.api('PATCH', `/agents/${a.body.id}`, { key: pro.key, body: { model: 'gpt-4o' } })
    expect(back.status).toBe(200)
    const refused = await s.api('PATCH', `/agents/${a.body.id}`, { key: pro.key, body: { model: 'claude-sonnet-4' } })
    expect(refused.status).toBe(400)
    expect(refused.body.field).toBe('model')
    // Too slow for calls, when changing to it on a phone agent: also a 400 naming model.
    const slow = await s.api('PATCH', `/agents/${a.body.id}`, { key: pro.key, body: { model: 'o3' } })
    expect(slow.status).toBe(400)
    expect(slow.body.field).toBe('model')
  })

  test('plan agent allowance → 409', async () => {
    const free = await s.developer({ plan: 'free' })
    expect((await create({ name: 'One' }, free.key)).status).toBe(201)
    const r = await create({ name: 'Two' }, free.key)
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('allows 1')
  })

  test('read key cannot create (403); build key can', async () => {
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'r', scope: 'read' })
    const build = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'b', scope: 'build' })
    expect((await create({ name: 'Nope' }, read.body.key)).status).toBe(403)
    expect((await s.api('GET', '/agents', { key: read.body.key })).status).toBe(200)
    expect((await create({ name: 'Yes' }, build.body.key)).status).toBe(201)
  })
})

describe('patch, list, delete', () => {
  test('patch changes only what is sent, returns the whole agent; GET body round-trips', async () => {
    const a = (await create({ name: 'Patchy', steps: [{ title: 'a', detail: 'b' }] })).body
    const r = await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: { greeting: 'Yo', widget: { height: 800 }, voice: { recordCalls: true } } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...a, greeting: 'Yo', widget: { ...a.widget, height: 800 }, voice: { ...a.voice, recordCalls: true } })
    const again = await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: r.body })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(r.body)
    // An empty list clears; secondLanguage null clears.
    const cleared = await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: { steps: [], secondLanguage: null } })
    expect(cleared.body.steps).toEqual([])
    expect(cleared.body.secondLanguage).toBeNull()
    expect((await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: { name: 'X' } })).status).toBe(400)
  })

  test('a read answers the latest change: the JSON kept beside the stored agent goes with each write', async () => {
    const a = (await create({ name: 'Kept' })).body
    const read = () => s.api('GET', `/agents/${a.id}`, { key: dev.key })
    // Twice: the second read is answered from what the first kept.
    for (let i = 0; i < 2; i++) {
      const got = await read()
      expect(got.status).toBe(200)
      expect(got.headers.get('content-type')).toBe('application/json;charset=utf-8')
      expect(got.body).toEqual(a)
    }
    const patched = await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: { greeting: 'Changed' } })
    expect((await read()).body).toEqual(patched.body)
    expect((await read()).body.greeting).toBe('Changed')
    // A write by another service (the number's attachment) shows too.
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+1 415 555 0177', source: 'rented', agent: a.id })
    expect((await read()).body.voice).toMatchObject({ phoneNumber: '+14155550177', surfaces: ['web', 'phone'] })
    // Another workspace's key reads it as absent, kept or not.
    const other = await s.developer({ plan: 'scale' })
    expect((await s.api('GET', `/agents/${a.id}`, { key: other.key })).status).toBe(404)
    expect((await s.api('DELETE', `/agents/${a.id}`, { key: dev.key })).status).toBe(204)
    expect((await read()).status).toBe(404)
  })

  test('list pages newest first; limit max 100', async () => {
    const ws = await s.developer({ plan: 'pro' })
    const ids = []
    for (let i = 0; i < 5; i++) {
      ids.push((await create({ name: `Agent ${i}` }, ws.key)).body.id)
      await s.console('POST', '/clock/advance', { ms: 10 })
    }
    const p1 = await s.api('GET', '/agents?limit=2', { key: ws.key })
    const p2 = await s.api('GET', `/agents?limit=2&cursor=${p1.body.nextCursor}`, { key: ws.key })
    const p3 = await s.api('GET', `/agents?limit=2&cursor=${p2.body.nextCursor}`, { key: ws.key })
    expect([...p1.body.items, ...p2.body.items, ...p3.body.items].map((a: any) => a.id)).toEqual(ids.reverse())
    expect(p3.body.nextCursor).toBeNull()
    expect((await s.api('GET', '/agents?limit=101', { key: ws.key })).status).toBe(400)
  })

  test('phone number attachment shows in voice; delete cascades to channels; 204 then 404', async () => {
    const a = (await create({ name: 'Caller' })).body
    const n = await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+1 415 555 0123', source: 'rented', agent: a.id })
    expect(n.status).toBe(201)
    const got = await s.api('GET', `/agents/${a.id}`, { key: dev.key })
    expect(got.body.voice.phoneNumber).toBe('+14155550123')
    expect(got.body.voice.surfaces).toEqual(['web', 'phone'])
    const numbers = await s.api('GET', '/phone-numbers', { key: dev.key })
    expect(numbers.body.items).toContainEqual(expect.objectContaining({ number: '+14155550123', source: 'rented', agent: a.id, label: null }))
    expect((await s.api('DELETE', `/agents/${a.id}`, { key: dev.key })).status).toBe(204)
    expect((await s.api('GET', `/agents/${a.id}`, { key: dev.key })).status).toBe(404)
    expect((await s.api('DELETE', `/agents/${a.id}`, { key: dev.key })).status).toBe(404)
    const after = await s.api('GET', '/phone-numbers', { key: dev.key })
    expect(after.body.items.find((x: any) => x.number === '+14155550123').agent).toBeNull()
  })
})

describe('lists', () => {
  test('voices, and models with availability per plan', async () => {
    const v = await s.api('GET', '/voices', { key: dev.key })
    expect(v.status).toBe(200)
    expect(v.body.items[0]).toEqual(expect.objectContaining({ id: expect.any(String), name: expect.any(String), accent: expect.any(String), tier: expect.stringMatching(/standard|premium/) }))
    const free = await s.developer({ plan: 'free' })
    const m = await s.api('GET', '/models', { key: free.key })
    const byId = Object.fromEntries(m.body.items.map((x: any) => [x.id, x]))
    expect(byId['gpt-4o-mini'].available).toBe(true)
    expect(byId['gpt-4o'].available).toBe(false)
    expect(byId.o3.voice).toBe(false)
    const scale = await s.api('GET', '/models', { key: dev.key })
    expect(scale.body.items.every((x: any) => x.id === 'claude-opus-4' || x.available)).toBe(true)
  })
})

test('a blank name is refused on create and patch', async () => {
  expect((await create({ name: '    ' })).body.error).toBe('name: must not be blank')
  const a = (await create({ name: 'Named' })).body
  expect((await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, body: { name: '  ' } })).status).toBe(400)
})

test('transfers: numbers read and stored E.164, mode cold by default or warm; a bad one is 400 naming it; versions keep them', async () => {
  const made = await create({
    name: 'Desk',
    transfers: [
      { name: ' Billing  team ', phoneNumber: '+1 (415) 555-0199', whenToUse: 'bills and refunds' },
      { name: 'Night', phoneNumber: '0044 20 7946 0018', whenToUse: 'after hours', mode: 'cold' },
      { name: 'Manager', phoneNumber: '+1 415 555 0198', whenToUse: 'a complaint', mode: 'warm' },
    ],
  })
  expect(made.status).toBe(201)
  expect(made.body.transfers).toEqual([
    { name: 'Billing team', phoneNumber: '+14155550199', whenToUse: 'bills and refunds', mode: 'cold' },
    { name: 'Night', phoneNumber: '+442079460018', whenToUse: 'after hours', mode: 'cold' },
    { name: 'Manager', phoneNumber: '+14155550198', whenToUse: 'a complaint', mode: 'warm' },
  ])
  const one = { name: 'A', phoneNumber: '+14155550199', whenToUse: 'x' }
  const cases: [unknown, string][] = [
    [[{ ...one, phoneNumber: '(415) 555-0199' }], 'transfers[0].phoneNumber'],
    [[one, { ...one, name: 'a' }], 'transfers[1].name'],
    [[{ ...one, whenToUse: '   ' }], 'transfers[0].whenToUse'],
    [[{ ...one, mode: 'lukewarm' }], 'transfers'],
    [Array.from({ length: 11 }, (_, i) => ({ ...one, name: `D${i}` })), 'transfers'],
  ]
  for (const [transfers, field] of cases) {
    const r = await s.api('PATCH', `/agents/${made.body.id}`, { key: dev.key, body: { transfers } })
    expect([r.status, r.body.error]).toEqual([400, expect.stringContaining(field)])
  }
  expect((await s.api('GET', `/agents/${made.body.id}`, { key: dev.key })).body.transfers).toHaveLength(3)
  // A published version freezes them; an edit shows as the `tools` panel changed.
  await s.publish(dev.key, made.body.id)
  expect((await s.api('PATCH', `/agents/${made.body.id}`, { key: dev.key, body: { transfers: [] } })).body.transfers).toEqual([])
  const status = await fetch(`${s.url}/agents/${made.body.id}/status`, { headers: { authorization: `Bearer ${dev.key}` } }).then((r) => r.json())
  expect(status.changed_fields).toEqual(['tools'])
})
