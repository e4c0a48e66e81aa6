import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

test('GET /console/machines lists every chart with its version', async () => {
  const r = await s.console('GET', '/machines')
  expect(r.status).toBe(200)
  const names = r.body.items.map((m: any) => m.name)
  expect(names).toEqual(expect.arrayContaining(['call', 'campaign', 'customerWorkspace', 'webhookEndpoint', 'webhookDelivery', 'agentPublication']))
  expect(r.body.items.every((m: any) => Number.isInteger(m.version))).toBe(true)
})

test('GET /console/machines/{name} returns a definition for the visualiser', async () => {
  const r = await s.console('GET', '/machines/campaign')
  expect(r.status).toBe(200)
  expect(r.body.definition.states).toBeDefined()
  expect(Object.keys(r.body.definition.states)).toEqual(expect.arrayContaining(['draft', 'sending', 'paused', 'sent', 'failed', 'cancelled']))
  expect((await s.console('GET', '/machines/nope')).status).toBe(404)
})

test('GET /console/actors/{id} is 404 for an unknown actor and needs the console token', async () => {
  expect((await s.console('GET', '/actors/customerWorkspace:org_nope')).status).toBe(404)
  const anon = await fetch(`${s.url}/console/machines`)
  expect(anon.status).toBe(401)
})
