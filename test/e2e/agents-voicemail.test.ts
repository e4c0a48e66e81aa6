/** `voice.voicemailMessage` through the API: kept trimmed, refused naming the field, turned off with null, frozen in versions. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
})
afterAll(() => s.stop())

test('set, read back, refused when wrong (nothing changed), turned off with null', async () => {
  const created = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Clinic', voice: { detectMachines: true, voicemailMessage: ' Hi {{firstName}}, Sunrise Dental here. ' } } })
  expect(created.status).toBe(201)
  expect(created.body.voice).toMatchObject({ detectMachines: true, voicemailMessage: 'Hi {{firstName}}, Sunrise Dental here.' })
  const id = created.body.id
  for (const bad of ['', 'Hi {{surname}}', 'x'.repeat(601)]) {
    const r = await s.api('PATCH', `/agents/${id}`, { key: dev.key, body: { voice: { voicemailMessage: bad } } })
    expect(r.status).toBe(400)
    expect(r.body.error).toStartWith('voice.voicemailMessage')
  }
  expect((await s.api('GET', `/agents/${id}`, { key: dev.key })).body.voice.voicemailMessage).toBe('Hi {{firstName}}, Sunrise Dental here.')
  const off = await s.api('PATCH', `/agents/${id}`, { key: dev.key, body: { voice: { voicemailMessage: null } } })
  expect(off.body.voice.voicemailMessage).toBeNull()
  // A new agent leaves none.
  expect((await s.api('POST', '/agents', { key: dev.key, body: { name: 'Plain' } })).body.voice.voicemailMessage).toBeNull()
})
