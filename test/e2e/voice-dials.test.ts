/**
 * An agent's voice dials through the API: `voice.speed`, `voice.patience` and
 * `voice.interruptions` are checked (400 naming the member), part of the `voice` panel and of its
 * versions (a rollback restores them), and a call runs with the published version's dials: a
 * draft edit reaches calls only once published, and the console's call shows the dials it ran with.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale' })
})
afterAll(() => s?.stop())

const DEFAULTS = {
  speed: null,
  patience: { level: 'normal', waitMs: null },
  interruptions: { enabled: true, minSpeechMs: null, minWords: null, backchannels: [] },
}

describe('the dials on an agent', () => {
  test('a new agent has the defaults (the service as it is)', async () => {
    const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Plain' } })
    expect(r.status).toBe(201)
    expect(r.body.voice).toMatchObject(DEFAULTS)
  })

  test('each bound is a 400 naming the member; nothing is created', async () => {
    const cases: [unknown, string][] = [
      [{ speed: 0.69 }, 'voice.speed'],
      [{ speed: 1.21 }, 'voice.speed'],
      [{ speed: 'fast' }, 'voice.speed'],
      [{ patience: { level: 'lazy' } }, 'voice.patience.level'],
      [{ patience: { waitMs: 199 } }, 'voice.patience.waitMs'],
      [{ patience: { waitMs: 3001 } }, 'voice.patience.waitMs'],
      [{ patience: { other: 1 } }, 'voice.patience.other'],
      [{ interruptions: { enabled: 'no' } }, 'voice.interruptions.enabled'],
      [{ interruptions: { minSpeechMs: 63 } }, 'voice.interruptions.minSpeechMs'],
      [{ interruptions: { minSpeechMs: 2001 } }, 'voice.interruptions.minSpeechMs'],
      [{ interruptions: { minWords: 0 } }, 'voice.interruptions.minWords'],
      [{ interruptions: { minWords: 11 } }, 'voice.interruptions.minWords'],
      [{ interruptions: { backchannels: ['x'.repeat(41)] } }, 'voice.interruptions.backchannels[0]'],
      [{ interruptions: { backchannels: Array.from({ length: 51 }, (_, i) => `word${i}`) } }, 'voice.interruptions.backchannels'],
      [{ interruptions: { backchannels: ['fine', '  '] } }, 'voice.interruptions.backchannels[1]'],
    ]
    const before = (await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length
    for (const [voice, field] of cases) {
      const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Dialled', voice } })
      expect({ voice, status: r.status }).toEqual({ voice, status: 400 })
      expect({ voice, error: r.body.error.split(':')[0] }).toEqual({ voice, error: field })
    }
    expect((await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length).toBe(before)
  })

  test('set, then edited member by member; backchannels trimmed and kept once', async () => {
    const voice = {
      speed: 1.1,
      patience: { level: 'patient', waitMs: null },
      interruptions: { enabled: true, minSpeechMs: 300, minWords: 2, backchannels: ['  sounds   lovely ', 'Sounds lovely', 'go on'] },
    }
    const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Dialled', voice } })
    expect(r.status).toBe(201)
    expect(r.body.voice).toMatchObject({ ...voice, interruptions: { ...voice.interruptions, backchannels: ['sounds lovely', 'go on'] } })
    const edited = await s.api('PATCH', `/agents/${r.body.id}`, { key: dev.key, body: { voice: { speed: null, patience: { waitMs: 1200 }, interruptions: { enabled: false } } } })
    expect(edited.status).toBe(200)
    expect(edited.body.voice).toMatchObject({
      speed: null,
      patience: { level: 'patient', waitMs: 1200 },
      interruptions: { enabled: false, minSpeechMs: 300, minWords: 2, backchannels: ['sounds lovely', 'go on'] },
    })
    const refused = await s.api('PATCH', `/agents/${r.body.id}`, { key: dev.key, body: { voice: { patience: { waitMs: 50 } } } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toStartWith('voice.patience.waitMs')
    expect((await s.api('GET', `/agents/${r.body.id}`, { key: dev.key })).body.voice.patience.waitMs).toBe(1200)
  })
})

describe('versions and calls', () => {
  const legacy = (method: string, path: string, body?: unknown) =>
    fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as any }),
    )

  /** A sandbox call to a callee who stays quiet; resolves with the console's view once its pipeline runs. */
  async function callOf(contact: string) {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(contact)}`, { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: 60_000 })).status).toBe(200)
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: 'Hi, this is Bean There.' } })
    expect(placed.status).toBe(202)
    const seen = await until(
      'the call runs its pipeline',
      () => s.console('GET', `/workspaces/${dev.id}/calls/${placed.body.id}`),
      (r) => !!r.body.pipeline,
    )
    await s.console('DELETE', `/workspaces/${dev.id}/calls/${placed.body.id}`)
    return seen.body
  }

  test('the voice panel holds the dials; a draft edit reaches calls only once published, and the console shows what a call ran with', async () => {
    const agent = await s.agent(dev.key, { name: 'Bean There', voice: { answersCalls: true } })
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent: agent.id })).status).toBe(201)
    const dials = { speed: 1.15, patience: { level: 'patient', waitMs: null }, interruptions: { enabled: false, minSpeechMs: null, minWords: 3, backchannels: ['go on'] } }
    expect((await s.api('PATCH', `/agents/${agent.id}`, { key: dev.key, body: { voice: dials } })).status).toBe(200)

    const status = await legacy('GET', `/agents/${agent.id}/status`)
    expect(status.body).toMatchObject({ has_unpublished_changes: true, changed_fields: ['voice'] })
    const diff = (await legacy('GET', `/agents/${agent.id}/diff-draft`)).body
    expect(Object.keys(diff.changes).every((k) => k.startsWith('voice.'))).toBe(true)
    expect(JSON.stringify(diff.changes)).toContain('1.15')

    // Published v1 still talks: the call runs with the defaults.
    const before = await callOf('+14155550901')
    expect(before.agentVersion).toBe(1)
    expect(before.pipeline.dials).toEqual(DEFAULTS)

    expect((await legacy('POST', `/agents/${agent.id}/publish`, {})).status).toBe(200)
    const v2 = await legacy('GET', `/agents/${agent.id}/versions/2`)
    expect(v2.body.snapshot.voice).toMatchObject(dials)
    const v1 = await legacy('GET', `/agents/${agent.id}/versions/1`)
    expect(v1.body.snapshot.voice).toMatchObject(DEFAULTS)

    const after = await callOf('+14155550902')
    expect(after.agentVersion).toBe(2)
    expect(after.pipeline.dials).toEqual(dials)

    // A rollback to v1 brings its dials back to the agent, and live (as v4, after the backup v3).
    expect((await legacy('POST', `/agents/${agent.id}/versions/1/rollback`)).body).toMatchObject({ success: true, version_id: 4 })
    expect((await s.api('GET', `/agents/${agent.id}`, { key: dev.key })).body.voice).toMatchObject(DEFAULTS)
    expect((await legacy('GET', `/agents/${agent.id}/versions/3`)).body.snapshot.voice).toMatchObject(dials)
  }, 60_000)
})
