/**
 * An agent's Deepgram Flux settings through the API (`voice.flux`): each out of Flux's documented
 * range is a 400 naming the member, an eager threshold above the end threshold too; set, read
 * back member by member; null is Flux's own default.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale' })
})
afterAll(() => s?.stop())

describe("an agent's Flux settings", () => {
  test('out of range, or eager above the end threshold: a 400 naming the member', async () => {
    const cases: [unknown, string][] = [
      [{ eotThreshold: 0.49 }, 'voice.flux.eotThreshold'],
      [{ eotThreshold: 0.91 }, 'voice.flux.eotThreshold'],
      [{ eagerEotThreshold: 0.29 }, 'voice.flux.eagerEotThreshold'],
      [{ eotTimeoutMs: 499 }, 'voice.flux.eotTimeoutMs'],
      [{ eotTimeoutMs: 10_001 }, 'voice.flux.eotTimeoutMs'],
      [{ eotThreshold: 0.6, eagerEotThreshold: 0.8 }, 'voice.flux.eagerEotThreshold'],
      [{ other: 1 }, 'voice.flux.other'],
    ]
    for (const [flux, field] of cases) {
      const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Flux', voice: { flux } } })
      expect({ flux, status: r.status }).toEqual({ flux, status: 400 })
      expect({ flux, error: r.body.error.split(':')[0] }).toEqual({ flux, error: field })
    }
  })

  test("Flux's defaults at first; set member by member, read back; null is the default again", async () => {
    const created = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Flux' } })
    expect(created.body.voice.flux).toEqual({ eotThreshold: null, eagerEotThreshold: null, eotTimeoutMs: null })
    const set = await s.api('PATCH', `/agents/${created.body.id}`, { key: dev.key, body: { voice: { flux: { eagerEotThreshold: 0.5, eotTimeoutMs: 3000 } } } })
    expect(set.status).toBe(200)
    expect(set.body.voice.flux).toEqual({ eotThreshold: null, eagerEotThreshold: 0.5, eotTimeoutMs: 3000 })
    const cleared = await s.api('PATCH', `/agents/${created.body.id}`, { key: dev.key, body: { voice: { flux: { eagerEotThreshold: null } } } })
    expect(cleared.body.voice.flux).toEqual({ eotThreshold: null, eagerEotThreshold: null, eotTimeoutMs: 3000 })
  })
})
