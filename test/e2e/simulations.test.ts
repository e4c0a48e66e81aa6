/**
 * Simulations end to end: scenarios and suites over the v1 API, runs of a suite whose calls go
 * through the call actor to scripted sandbox callers speaking real audio into the voice pipeline,
 * each expectation kind passing and failing for its own reason, a run cancelled midway, the
 * publish gate, and the same suite run twice giving the same transcripts and results.
 *
 * Speech engines: the sandbox doubles on the agent's side (scripted transcripts, formant voice), so
 * the words are deterministic; Silero VAD runs for real on the callee's audio. The manual clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, runSuite, SHOP_FAQ } from '../support/simulations'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'free', name: 'Sims' })
  // A draft only: simulations talk to drafts that nobody else can reach.
  agent = await agentWithFaq(
    s,
    dev.key,
    {
      name: 'Bean There',
      greeting: 'Hello from Bean There!',
      captureLeads: true,
      voice: { answersCalls: true, recordCalls: true },
      collectFields: [{ name: 'name', description: "the caller's name" }],
    },
    SHOP_FAQ,
  )
})
afterAll(() => s?.stop())

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })

async function scenario(body: Record<string, unknown>): Promise<string> {
  const r = await api('POST', '/simulations/scenarios', body)
  expect(r.status).toBe(201)
  return r.body.id
}

async function suite(scenarios: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const r = await api('POST', '/simulations/suites', { name: 'Suite', agent, scenarios, ...extra })
  expect(r.status).toBe(201)
  return r.body.id
}

/** A run of the suite, waited for until it is done or cancelled. */
const runToEnd = (suiteId: string, body?: Record<string, unknown>) => runSuite(s, dev.key, suiteId, body, { over: ['done', 'cancelled'] })

const HOURS = { name: 'Saturday hours', caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'My name is Priya.' }] } }
const LEAD = { name: 'Leaves an email', caller: { lines: [{ say: 'My email is priya@example.com' }] } }
const PASSING = [
  { kind: 'field', name: 'name', equals: 'priya' },
  { kind: 'field', name: 'name', oneOf: ['Asha', 'Priya'] },
  { kind: 'says', text: '7 am to 7 pm' },
  { kind: 'neverSays', text: 'closed' },
  { kind: 'ended', by: 'caller' },
  { kind: 'maxTurns', turns: 6 },
  { kind: 'slowestTurn', ms: 0 },
]

/** What must come out the same on every run of the same suite: transcripts and judgements. */
const judged = (run: any) => JSON.stringify(run.results.map((r: any) => ({ scenario: r.scenario, status: r.status, transcript: r.transcript, expectations: r.expectations })))

let firstRun: any
let hoursSuite: string
let gateSuite: string

describe('simulations', () => {
  test('validation names the field', async () => {
    const noSay = await api('POST', '/simulations/scenarios', { name: 'x', caller: { lines: [{ interrupt: true }] } })
    expect(noSay.status).toBe(400)
    expect(noSay.body.error).toStartWith('caller.lines[0].say:')
    const noName = await api('POST', '/simulations/scenarios', { ...HOURS, expectations: [{ kind: 'field', equals: 'x' }] })
    expect(noName.status).toBe(400)
    expect(noName.body.error).toStartWith('expectations[0].name:')
    const stray = await api('POST', '/simulations/scenarios', { ...HOURS, expectations: [{ kind: 'says', text: 'hi', ms: 3 }] })
    expect(stray.body.error).toStartWith('expectations[0].ms:')
    const unknown = await api('POST', '/simulations/suites', { name: 'S', agent, scenarios: ['scn_nope'] })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toStartWith('scenarios[0]:')
    const noVersion = await api('POST', `/simulations/suites/${await suite([await scenario(HOURS)])}/runs`, { target: 7 })
    expect(noVersion.status).toBe(400)
    expect(noVersion.body.error).toStartWith('target:')
  })

  test('a run of the draft: each expectation kind passes, or fails for its own reason, with evidence', async () => {
    const good = await scenario({ ...HOURS, expectations: PASSING })
    const bad = await scenario({
      ...HOURS,
      name: 'Saturday hours, wrong expectations',
      expectations: [
        { kind: 'field', name: 'name', equals: 'Asha' },
        { kind: 'field', name: 'name', oneOf: ['Asha', 'Ravi'] },
        { kind: 'says', text: 'we are closed' },
        { kind: 'neverSays', text: '7 am' },
        { kind: 'ended', by: 'agent' },
        { kind: 'maxTurns', turns: 2 },
        { kind: 'tool', name: 'escalate' },
      ],
    })
    const lead = await scenario({ ...LEAD, expectations: [{ kind: 'tool', name: 'capture_lead' }] })
    hoursSuite = await suite([good, bad, lead])
    const run = await runToEnd(hoursSuite)
    firstRun = run
    expect(run).toMatchObject({ status: 'done', passed: false, target: 'draft', totals: { calls: 3, finished: 3, passed: 2, failed: 1 } })
    const [pass, fail, tool] = run.results
    expect(pass.status).toBe('passed')
    // A starved machine may hear a pause inside a line as two turns: the words are what count here.
    const heard = pass.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)
    expect(heard.join(' ')).toBe('What time do you open on Saturday? My name is Priya.')
    expect(pass.transcript[0]).toEqual({ speaker: 'agent', text: 'Hello from Bean There!', atMs: 0 })
    expect(pass.expectations.every((e: any) => e.passed)).toBe(true)
    expect(pass.expectations[0].evidence).toEqual({ field: 'name', value: 'Priya' })
    expect(pass.expectations[2].evidence.lines[0].text).toContain('7 am to 7 pm')
    expect(pass.expectations[5].evidence.turns).toBeGreaterThanOrEqual(3)
    expect(pass.call.recording).toContain('/recordings/')
    expect(pass.call.hangup).toBe('answered')

    expect(fail.status).toBe('failed')
    expect(fail.expectations.map((e: any) => e.passed)).toEqual([false, false, false, false, false, false, false])
    expect(fail.expectations[0].evidence).toEqual({ field: 'name', value: 'Priya' })
    expect(fail.expectations[2].evidence).toEqual({ lines: [] })
    expect(fail.expectations[3].evidence.lines[0].text).toContain('7 am')
    expect(fail.expectations[4].evidence).toEqual({ endedBy: 'caller', hangup: 'answered' })
    expect(fail.expectations[5].evidence.turns).toBeGreaterThanOrEqual(3)
    expect(fail.expectations[6].evidence.tools).not.toContain('escalate')

    expect(tool.status).toBe('passed')
    expect(tool.expectations[0].evidence.tools).toContain('capture_lead')

    // Simulated calls are not listed and not billed.
    const listed = await api('GET', '/calls')
    expect(listed.body.items).toEqual([])
    expect((await api('GET', `/calls/${pass.call.id}`)).body.status).toBe('completed')
    const ledger = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    expect(await ledger.count({ workspaceId: dev.id })).toBe(0)
  }, 150_000)

  test('the same suite on the same draft and seed: byte-identical transcripts and results', async () => {
    const once = await runToEnd(hoursSuite, { target: 'draft', seed: 7 })
    const again = await runToEnd(hoursSuite, { target: 'draft', seed: 7 })
    expect(again.id).not.toBe(once.id)
    expect(judged(again)).toBe(judged(once))
    expect(once.results.map((r: any) => r.status)).toEqual(firstRun.results.map((r: any) => r.status))
  }, 150_000)

  test('a run cancelled midway: no call starts after, the calls in progress end', async () => {
    const id = await scenario({ ...HOURS, name: 'long', caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'Where do customers park?' }, { say: 'My name is Priya.' }] } })
    const suiteId = await suite([id])
    const started = await api('POST', `/simulations/suites/${suiteId}/runs`, { target: 'draft', count: 3 })
    const runId = started.body.id
    await until(
      'its calls are talking',
      () => api('GET', `/simulations/runs/${runId}`),
      (r) => r.body.status === 'running' && r.body.results.some((x: any) => x.status === 'calling'),
      { withinMs: 20_000, everyMs: 100 },
    )
    const cancelled = await api('POST', `/simulations/runs/${runId}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')
    expect(cancelled.body.results.map((r: any) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled'])
    const again = await api('POST', `/simulations/runs/${runId}/cancel`)
    expect(again.status).toBe(409)
    expect(again.body.state).toBe('cancelled')
    // The calls it had started end (ended by DELETE: completed, hangup cancelled).
    const store = await s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    await until(
      'its calls ended',
      async () => (await store.find({ workspaceId: dev.id })).filter((r: any) => r.simulation?.runId === runId),
      (rows) => rows.length > 0 && rows.every((r: any) => ['completed', 'cancelled', 'failed'].includes(r.status)),
      { withinMs: 20_000, everyMs: 100 },
    )
    const events = await s.server.services.store.collection<any>({ name: 'events', indexes: [] })
    const finished = (await events.find({ type: 'simulation.finished' })).find((e: any) => e.data.id === runId)
    // docs/api/simulations.md: the run as GET answers it, without `results`.
    expect(finished?.data).toMatchObject({ id: runId, status: 'cancelled', totals: { calls: 3 } })
    expect(finished?.data).not.toHaveProperty('results')
    // Lists carry runs without their results too (docs/api/simulations.md), on v1 and the console.
    const listed = await api('GET', `/simulations/runs?suite=${suiteId}`)
    expect(listed.status).toBe(200)
    const item = listed.body.items.find((r: any) => r.id === runId)
    expect(item).toMatchObject({ id: runId, status: 'cancelled' })
    expect(item).not.toHaveProperty('results')
    const consoleList = await s.console('GET', `/workspaces/${dev.id}/simulations/suites/${suiteId}/runs`)
    expect(consoleList.body.items.find((r: any) => r.id === runId)).not.toHaveProperty('results')
  }, 60_000)

  test('the publish gate: a required suite must have passed on the draft as it is', async () => {
    const good = await scenario({ ...HOURS, expectations: [{ kind: 'says', text: '7 am to 7 pm' }] })
    const bad = await scenario({ ...HOURS, expectations: [{ kind: 'says', text: 'we are closed' }] })
    const gated = await suite([bad], { requiredToPublish: true })
    const publish = () => fetch(`${s.url}/agents/${agent}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
    const never = await publish()
    expect(never.status).toBe(409)
    expect((await never.json()).detail).toContain('never run against the draft')
    const failed = await runToEnd(gated)
    expect(failed.passed).toBe(false)
    const refused = await publish()
    expect(refused.status).toBe(409)
    expect((await refused.json()).detail).toContain(`the latest run ${failed.id} failed`)
    // A second required suite on the agent is refused: one gate per agent.
    const twice = await api('POST', '/simulations/suites', { name: 'Other', agent, scenarios: [good], requiredToPublish: true })
    expect(twice.status).toBe(409)
    expect((await api('PUT', `/simulations/suites/${gated}`, { name: 'Gate', agent, scenarios: [good], requiredToPublish: true })).status).toBe(200)
    const passed = await runToEnd(gated)
    expect(passed.passed).toBe(true)
    // An edit of the draft after the run: that run no longer speaks for it.
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hello from Bean There, again!' })).status).toBe(200)
    const stale = await publish()
    expect(stale.status).toBe(409)
    expect((await stale.json()).detail).toContain('the draft changed after the latest run')
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hello from Bean There!' })).status).toBe(200)
    const published = await publish()
    expect(published.status).toBe(200)
    // Turning the gate off lets any draft publish.
    expect((await api('PUT', `/simulations/suites/${gated}`, { name: 'Gate', agent, scenarios: [good], requiredToPublish: false })).status).toBe(200)
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hi!' })).status).toBe(200)
    expect((await publish()).status).toBe(200)
    gateSuite = gated
  }, 150_000)

  test('two versions compared: the runs differ where the versions do', async () => {
    // Version 1 greets "Hello from Bean There!", version 2 "Hi!" (the gate test published both).
    const v1 = await runToEnd(gateSuite, { target: 1 })
    const v2 = await runToEnd(gateSuite, { target: 2 })
    expect([v1.target, v2.target]).toEqual([1, 2])
    const compared = await api('GET', `/simulations/runs/${v1.id}/compare?with=${v2.id}`)
    expect(compared.status).toBe(200)
    expect(compared.body.same).toBe(false)
    const [diff] = compared.body.differences
    expect(diff.status).toBeNull()
    expect(diff.expectations).toEqual([])
    expect([diff.transcript.a[0].text, diff.transcript.b[0].text]).toEqual(['Hello from Bean There!', 'Hi!'])
    const self = await api('GET', `/simulations/runs/${v1.id}/compare?with=${v1.id}`)
    expect(self.body).toMatchObject({ same: true, differences: [] })
    const other = await api('GET', `/simulations/runs/${v1.id}/compare?with=${firstRun.id}`)
    expect(other.status).toBe(400)
    expect(other.body.error).toStartWith('with:')
  }, 150_000)
})
