/**
 * A scenario from a call, end to end: a recorded sandbox call (a simulated one, and a real one put
 * through to a person) becomes a scenario whose caller plays the call's recorded caller audio, cut
 * at the caller's turns; run twice on the manual clock it gives the same results and answer times
 * within the noise; against a draft that answers differently, or waits longer to answer, the runs'
 * comparison shows it; the recording's retention ending makes its run fail naming why; the part
 * of a call after a transfer is not replayed; refusals name why.
 *
 * Speech engines: the sandbox doubles (scripted transcripts, formant voice); Silero VAD runs for
 * real on the replayed audio. The manual clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { callsFeature } from '../../src/features/calls'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, runSuite, SHOP_FAQ } from '../support/simulations'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'free', name: 'Replays' })
  agent = await agentWithFaq(
    s,
    dev.key,
    { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true }, collectFields: [{ name: 'name', description: "the caller's name" }] },
    SHOP_FAQ,
  )
})
afterAll(() => s?.stop())

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })

async function created(path: string, body: Record<string, unknown>): Promise<any> {
  const r = await api('POST', path, body)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body
}

/** A suite of `scenarios` on the agent, run once against the draft to its end. */
async function runOf(scenarios: string[]): Promise<any> {
  const suite = await created('/simulations/suites', { name: 'Suite', agent, scenarios })
  return runSuite(s, dev.key, suite.id)
}

/** What must come out the same on every run: transcripts and judgements. */
const judged = (run: any) => JSON.stringify(run.results.map((r: any) => ({ scenario: r.scenario, status: r.status, transcript: r.transcript, expectations: r.expectations })))
/** The console's read of a replayed line's audio in a run (a WAV, not JSON). */
const replayedTurn = (run: string, line: number) =>
  fetch(`${s.url}/console/workspaces/${dev.id}/simulations/runs/${run}/replayed/${replay.id}/${line}`, { headers: { authorization: `Bearer ${s.consoleToken}` } })
const callerLines = (r: any) => r.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)

let sourceCall: string
let replay: any
let replaySuite: string
let firstReplay: any

describe('a scenario from a call', () => {
  test('a recorded call becomes a scenario: its caller’s turns as audio lines, its outcome as suggestions', async () => {
    const scripted = await created('/simulations/scenarios', { name: 'Saturday hours', caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'My name is Priya.' }] } })
    const source = await runOf([scripted.id])
    expect(source.results[0].status).toBe('passed')
    sourceCall = source.results[0].call.id
    replay = await created('/simulations/scenarios', { fromCall: sourceCall })
    expect(replay.name).toBe(`Replay of call ${sourceCall}`)
    expect(replay.caller.fromCall).toBe(sourceCall)
    expect(replay.expectations).toEqual([])
    expect(replay.suggestedExpectations).toEqual([
      { kind: 'field', name: 'name', equals: 'Priya' },
      { kind: 'ended', by: 'caller' },
    ])
    const lines = replay.caller.lines
    expect(lines.map((l: any) => l.say)).toEqual(callerLines(source.results[0]))
    for (const l of lines) {
      expect(l.interrupt).toBeUndefined()
      expect(l.audio.toMs).toBeGreaterThan(l.audio.fromMs)
    }
    // The second turn comes after the first, with the agent's answer between them.
    expect(lines[1].audio.fromMs).toBeGreaterThan(lines[0].audio.toMs)
    // Kept where the recording is: the caller's side beside the mix, the mix's link unchanged.
    expect(
      readdirSync(join(s.dataDir, 'recordings'))
        .filter((name) => name.startsWith(`${sourceCall}-`))
        .sort(),
    ).toEqual([`${sourceCall}-1.caller.wav`, `${sourceCall}-1.wav`])
    const files = s.server.services.of(callsFeature).callerRecordings
    const audio = await files.audio(dev.id, sourceCall, 1)
    expect('pcm' in audio && audio.pcm.length).toBeGreaterThan(lines[1].audio.toMs * 8 - 1)
    const wav = await fetch(`${s.url}${new URL(source.results[0].call.recording).pathname}`)
    expect(wav.status).toBe(200)
    expect(wav.headers.get('content-type')).toBe('audio/wav')
  }, 150_000)

  test('run twice on the manual clock: identical results, and the caller is heard as it was', async () => {
    const withExpectations = await api('PUT', `/simulations/scenarios/${replay.id}`, {
      name: replay.name,
      caller: replay.caller,
      expectations: replay.suggestedExpectations,
    })
    expect(withExpectations.status, JSON.stringify(withExpectations.body)).toBe(200)
    replaySuite = (await created('/simulations/suites', { name: 'Replays', agent, scenarios: [replay.id] })).id
    const a = await runSuite(s, dev.key, replaySuite)
    const b = await runSuite(s, dev.key, replaySuite)
    expect(a.results[0].status, JSON.stringify(a.results[0])).toBe('passed')
    expect(callerLines(a.results[0])).toEqual(replay.caller.lines.map((l: any) => l.say))
    expect(judged(b)).toBe(judged(a))
    // Each caller turn is timed, and the same version answers each as soon in both runs.
    expect(a.results[0].call.turns.map((t: any) => t.caller)).toEqual(callerLines(a.results[0]))
    expect(a.results[0].call.turns.every((t: any) => t.answerMs >= t.waitedMs && t.waitedMs > 0)).toBe(true)
    // Where each turn's wait fell due in the caller's audio is the same on both runs.
    expect(b.results[0].call.turns.map((t: any) => t.waitedMs)).toEqual(a.results[0].call.turns.map((t: any) => t.waitedMs))
    const self = await api('GET', `/simulations/runs/${a.id}/compare?with=${b.id}`)
    expect(self.body, JSON.stringify(self.body)).toMatchObject({ same: true, differences: [] })
    firstReplay = a
    // The console's run page: which lines replay recorded audio, and each one's audio.
    const consoleRun = await s.console('GET', `/workspaces/${dev.id}/simulations/runs/${a.id}`)
    expect(consoleRun.body.replayed).toEqual({ [replay.id]: [true, true] })
    const turn = await replayedTurn(a.id, 1)
    expect(turn.status).toBe(200)
    expect(turn.headers.get('content-type')).toBe('audio/wav')
    const wav = new Uint8Array(await turn.arrayBuffer())
    expect(new TextDecoder().decode(wav.subarray(0, 4))).toBe('RIFF')
    // 44 bytes of header, then 16 samples a millisecond of the line's stretch.
    const line = replay.caller.lines[1].audio
    expect(wav.length - 44).toBe((line.toMs - line.fromMs) * 16)
  }, 150_000)

  test('a draft that answers differently: the comparison shows the difference', async () => {
    // Another greeting, and no field collected any more.
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hi, Bean There here.', collectFields: [] })).status).toBe(200)
    const changed = await runSuite(s, dev.key, replaySuite)
    const compared = await api('GET', `/simulations/runs/${firstReplay.id}/compare?with=${changed.id}`)
    expect(compared.status).toBe(200)
    expect(compared.body.same).toBe(false)
    const [diff] = compared.body.differences
    expect([diff.transcript.a[0].text, diff.transcript.b[0].text]).toEqual(['Hello from Bean There!', 'Hi, Bean There here.'])
    expect(diff.fields).toEqual({ a: { name: 'Priya' }, b: {} })
    expect(diff.tools).toBeNull()
    expect(diff.status).toEqual({ a: 'passed', b: 'failed' })
    expect(diff.expectations).toEqual([{ index: 0, kind: 'field', a: true, b: false }])
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hello from Bean There!', collectFields: [{ name: 'name', description: "the caller's name" }] })).status).toBe(200)
  }, 150_000)

  test('a draft that waits longer before it answers: the comparison shows each turn’s answer time', async () => {
    // The same words, answered after at least 1.5 s of the caller's silence.
    const slower = { answersCalls: true, recordCalls: true, patience: { level: 'normal', waitMs: 1_500 } }
    expect((await api('PATCH', `/agents/${agent}`, { voice: slower })).status).toBe(200)
    const slow = await runSuite(s, dev.key, replaySuite)
    expect(judged(slow)).toBe(judged(firstReplay))
    expect(slow.results[0].call.turns.every((t: any) => t.waitedMs >= 1_500)).toBe(true)
    const compared = await api('GET', `/simulations/runs/${firstReplay.id}/compare?with=${slow.id}`)
    expect(compared.body.same).toBe(false)
    const [diff] = compared.body.differences
    expect([diff.status, diff.transcript, diff.fields, diff.tools, diff.expectations]).toEqual([null, null, null, null, []])
    const before = firstReplay.results[0].call.turns
    expect(diff.timings.map((t: any) => [t.index, t.caller])).toEqual(before.map((t: any, i: number) => [i, t.caller]))
    for (const t of diff.timings) {
      expect(t.a).toBe(before[t.index].answerMs)
      expect(t.b).toBeGreaterThanOrEqual(1_500)
      expect(t.diffMs).toBe(t.b - t.a)
    }
    // A threshold above the change hides it.
    const coarse = await api('GET', `/simulations/runs/${firstReplay.id}/compare?with=${slow.id}&timingMs=5000`)
    expect(coarse.body).toMatchObject({ same: true, differences: [] })
    const back = { answersCalls: true, recordCalls: true, patience: { level: 'normal', waitMs: null } }
    expect((await api('PATCH', `/agents/${agent}`, { voice: back })).status).toBe(200)
  }, 150_000)

  test('barge-ins become interrupt lines at their offset, keypad turns keys', async () => {
    const scripted = await created('/simulations/scenarios', {
      name: 'Cuts in',
      caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'Sorry, is the parking free?', interrupt: true, afterMs: 500 }, { digits: '42#' }] },
    })
    const source = await runOf([scripted.id])
    const made = await created('/simulations/scenarios', { fromCall: source.results[0].call.id, name: 'Cuts in, replayed' })
    const lines = made.caller.lines
    expect(lines.map((l: any) => l.say ?? l.digits)).toEqual(['What time do you open on Saturday?', 'Sorry, is the parking free?', '42#'])
    expect(lines[0].interrupt).toBeUndefined()
    expect(lines[1].interrupt).toBe(true)
    // The caller came in ~500 ms into the answer as it heard it; the recording places the agent's audio where it was sent.
    expect(lines[1].afterMs).toBeGreaterThan(200)
    expect(lines[1].afterMs).toBeLessThan(1_500)
    expect(lines[2]).toEqual({ digits: '42#' })
  }, 150_000)

  test('refusals name why', async () => {
    // The console's "Make a test from this call" makes the same scenario.
    const fromConsole = await s.console('POST', `/workspaces/${dev.id}/simulations/scenarios`, { fromCall: sourceCall })
    expect(fromConsole.status).toBe(201)
    expect(fromConsole.body.caller).toEqual(replay.caller)
    const unknown = await api('POST', '/simulations/scenarios', { fromCall: 'out_nope' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toContain('out_nope')
    const both = await api('POST', '/simulations/scenarios', { fromCall: sourceCall, caller: { lines: [{ say: 'Hi' }] } })
    expect(both.status).toBe(400)
    expect(both.body.error).toStartWith('caller:')
    const written = await api('POST', '/simulations/scenarios', { name: 'x', caller: { lines: [{ say: 'Hi', audio: { fromMs: 0, toMs: 100 } }] } })
    expect(written.status).toBe(400)
    expect(written.body.error).toStartWith('caller.lines[0].audio:')
    const neither = await api('POST', '/simulations/scenarios', { name: 'x' })
    expect(neither.status).toBe(400)
    expect(neither.body.error).toStartWith('caller:')
    const moved = await api('PUT', `/simulations/scenarios/${replay.id}`, { name: 'x', caller: { ...replay.caller, fromCall: 'out_other' } })
    expect(moved.status).toBe(400)
    expect(moved.body.error).toStartWith('caller.fromCall:')
    // A call of an agent that does not record has no caller's audio to replay.
    expect((await api('PATCH', `/agents/${agent}`, { voice: { answersCalls: true, recordCalls: false } })).status).toBe(200)
    const unrecorded = await runOf([(await created('/simulations/scenarios', { name: 'Hi', caller: { lines: [{ say: 'Hello there.' }] } })).id])
    const refused = await api('POST', '/simulations/scenarios', { fromCall: unrecorded.results[0].call.id })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('was not recorded')
    expect((await api('PATCH', `/agents/${agent}`, { voice: { answersCalls: true, recordCalls: true } })).status).toBe(200)
  }, 150_000)

  test('the recording’s retention ends: the sweep deletes the caller’s side too, and a run fails naming why', async () => {
    // Free plan: 30 days; the sweep runs on each advance that crosses a day.
    expect((await s.console('POST', '/clock/advance', { ms: 31 * 86_400_000 })).status).toBe(200)
    const files = s.server.services.of(callsFeature).callerRecordings
    await until(
      'the caller’s side is swept',
      async () => readdirSync(join(s.dataDir, 'recordings')).filter((name) => name.startsWith(`${sourceCall}-`)),
      (names) => names.length === 0,
      10_000,
    )
    expect(await files.audio(dev.id, sourceCall, 1)).toMatchObject({ gone: expect.stringContaining('retention ended') })
    const run = await runSuite(s, dev.key, replaySuite)
    expect(run.results[0].status).toBe('failed')
    expect(run.results[0].call).toBeNull()
    expect(run.results[0].error).toContain(`the recording of call ${sourceCall} was deleted: its retention ended`)
    const gone = await replayedTurn(firstReplay.id, 0)
    expect(gone.status).toBe(404)
    expect((await gone.json()).error).toContain('retention ended')
  }, 150_000)

  test('a transferred call: only what the caller said to the agent, before the hand-off, is replayed', async () => {
    const scale = await s.developer({ plan: 'scale', name: 'Front desk' })
    const billing = '+14155550777'
    const desk = await s.agent(scale.key, {
      name: 'Front desk',
      voice: { answersCalls: true, recordCalls: true },
      transfers: [{ name: 'Billing', phoneNumber: billing, whenToUse: 'questions about a bill, a refund or a payment', mode: 'cold' }],
    })
    expect((await s.console('POST', `/workspaces/${scale.id}/phone-numbers`, { number: '+14155550700', source: 'rented', agent: desk.id })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${scale.id}/contacts`, { phone: '+14155550701' })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(billing)}`, { pickup: 'answer', ringMs: 0, lines: ['Billing, this is Sam speaking.'], hangupAfterMs: 20_000 })).status).toBe(
      200,
    )
    // The caller's second line would come after the hand-off: the person hears it, the agent never does.
    expect((await s.console('PUT', '/sandbox/phones/%2B14155550701', { pickup: 'answer', ringMs: 0, lines: ['I need a person.', 'Hi Sam, it is about my refund.'], hangupAfterMs: null })).status).toBe(
      200,
    )
    const placed = await s.api('POST', '/calls', { key: scale.key, body: { to: '+14155550701', purpose: 'Hello, this is the front desk returning your call.' } })
    expect(placed.status).toBe(202)
    const call = () => s.api('GET', `/calls/${placed.body.id}`, { key: scale.key })
    await until('put through to Billing', call, (r) => r.body.transfer?.answeredAt != null, 30_000)
    await s.console('POST', '/clock/advance', { ms: 20_000 })
    const done = await until('ended and analysed', call, (r) => r.body.status === 'completed' && r.body.analysedAt !== null, 20_000)
    expect(done.body.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)).toEqual(['I need a person.'])
    const made = await s.api('POST', '/simulations/scenarios', { key: scale.key, body: { fromCall: placed.body.id } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    expect(made.body.caller.lines.map((l: any) => l.say)).toEqual(['I need a person.'])
    expect(made.body.suggestedExpectations).toContainEqual({ kind: 'tool', name: 'transfer_call' })
  }, 150_000)

  test('a customer’s erasure deletes the caller’s side with the mix: nothing is left to replay', async () => {
    // Scale keeps recordings 75 days, so only the erasure (30 days after the delete) takes them.
    const scale = await s.developer({ plan: 'scale', name: 'Agency' })
    const customer = (await s.api('POST', '/customers', { key: scale.key, body: { name: 'Acme' } })).body.id
    const inside = (method: string, path: string, body?: unknown) => s.api(method, path, { key: scale.key, workspace: customer, body })
    const helper = await inside('POST', '/agents', { name: 'Helper', greeting: 'Hello!', voice: { answersCalls: true, recordCalls: true } })
    const scripted = await inside('POST', '/simulations/scenarios', { name: 'Hi', caller: { lines: [{ say: 'Hello there.' }] } })
    const suite = await inside('POST', '/simulations/suites', { name: 'S', agent: helper.body.id, scenarios: [scripted.body.id] })
    const started = await inside('POST', `/simulations/suites/${suite.body.id}/runs`, { target: 'draft' })
    const run = await until(
      'the run is done',
      () => inside('GET', `/simulations/runs/${started.body.id}`),
      (r) => r.body.status === 'done',
      120_000,
    )
    const callId = run.body.results[0].call.id
    expect((await inside('POST', '/simulations/scenarios', { fromCall: callId })).status).toBe(201)
    const recorded = () => readdirSync(join(s.dataDir, 'recordings')).filter((name) => name.startsWith(`${callId}-`))
    expect(recorded()).toHaveLength(2)
    expect((await s.api('DELETE', `/customers/${customer}`, { key: scale.key })).status).toBe(200)
    expect((await s.console('POST', '/clock/advance', { ms: 31 * 86_400_000 })).status).toBe(200)
    await until('both files are erased', recorded, (names) => names.length === 0, 20_000)
    const files = s.server.services.of(callsFeature).callerRecordings
    expect(await files.audio(customer, callId, 1)).toMatchObject({ gone: expect.stringContaining('erased') })
  }, 150_000)
})
