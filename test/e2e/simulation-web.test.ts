/**
 * Website-chat and chat-app scenarios end to end: a `web` scenario's lines are written one by one through the
 * web chat's visitor path as the run's target (a draft nobody can reach yet, or a version), the
 * chat is read for fields as a call's analysis reads them, and the same expectations are judged:
 * each passing, or failing for its own reason with its evidence. The same suite run twice gives the
 * same transcripts and verdicts; the chats are test conversations marked simulated, so nothing is
 * billed or counted in analytics. The `local` model and the manual clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, HOURS_FAQ, runSuite } from '../support/simulations'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer({})
  dev = await s.developer({ plan: 'free', name: 'Web sims' })
  const fields = { name: 'Bean There', greeting: 'Hi, this is Bean There. How can I help?', captureLeads: true, collectFields: [{ name: 'name', description: "the visitor's name" }] }
  agent = await agentWithFaq(s, dev.key, fields, HOURS_FAQ)
})
afterAll(() => s?.stop())

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })

async function scenario(body: Record<string, unknown>): Promise<string> {
  const r = await api('POST', '/simulations/scenarios', { channel: 'web', ...body })
  expect(r.status).toBe(201)
  return r.body.id
}

const runToEnd = (suiteId: string, body?: Record<string, unknown>) => runSuite(s, dev.key, suiteId, body, { poll: { withinMs: 60_000, everyMs: 100 } })

const CHAT = {
  name: 'Saturday hours by chat',
  caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'My name is Priya.' }, { say: 'My email is priya@example.com' }] },
}
const judged = (run: any) => JSON.stringify(run.results.map((r: any) => ({ scenario: r.scenario, status: r.status, transcript: r.transcript, expectations: r.expectations })))

describe('web chat scenarios', () => {
  test('phone-only line members are refused on a web scenario, naming the member', async () => {
    for (const [line, member] of [
      [{ digits: '12#' }, 'digits'],
      [{ say: 'Hi', waitMs: 100 }, 'waitMs'],
      [{ say: 'Hi', interrupt: true }, 'interrupt'],
      [{ noise: true }, 'noise'],
    ] as const) {
      const r = await api('POST', '/simulations/scenarios', { name: 'x', channel: 'web', caller: { lines: [line] } })
      expect(r.status).toBe(400)
      expect(r.body.error).toStartWith(`caller.lines[0].${member}: applies only to channel phone`)
    }
    const email = await api('POST', '/simulations/scenarios', { name: 'x', channel: 'email', caller: { lines: [{ say: 'Hi' }] } })
    expect(email.status).toBe(400)
    expect(email.body.error).toStartWith('channel')
    const keyed = await api('POST', '/simulations/scenarios', { name: 'x', channel: 'chatapp', caller: { lines: [{ digits: '1' }] } })
    expect(keyed.body.error).toStartWith('caller.lines[0].digits: applies only to channel phone; a chat-app customer')
  })

  test('a caller is scripted lines or a persona, never both or neither; a persona needs a vendor model, and only local is here', async () => {
    const refused = async (caller: unknown, error: string) => {
      const r = await api('POST', '/simulations/scenarios', { name: 'x', channel: 'web', caller })
      expect(r.status, JSON.stringify(r.body)).toBe(400)
      expect(r.body.error).toStartWith(error)
    }
    const persona = { persona: 'Priya, a regular who is in a hurry', goal: 'find out when the shop opens on Saturday' }
    await refused({ lines: [{ say: 'Hi' }], ...persona }, 'caller.persona: a caller is scripted (lines) or a persona, not both')
    await refused({}, 'caller.lines: is required (or caller.persona with caller.goal')
    await refused({ persona: persona.persona }, 'caller.goal: is required with caller.persona')
    await refused({ lines: [{ say: 'Hi' }], maxTurns: 3 }, 'caller.maxTurns: applies only to a persona caller')
    await refused({ ...persona, persona: '   ' }, 'caller.persona: must not be blank')
    await refused({ ...persona, opening: '> hello' }, 'caller.opening: must not start with')
    // Well formed, but this service has no vendor key and the workspace none of its own: the local model plays scripted callers only.
    await refused(persona, 'caller.persona: a persona caller is played by a vendor model (OpenAI or Anthropic), and only the local model is available here')
    const scripted = await scenario({ name: 'scripted still', caller: { lines: [{ say: 'Hi' }] } })
    const replaced = await api('PUT', `/simulations/scenarios/${scripted}`, { name: 'x', channel: 'web', caller: persona })
    expect(replaced.status).toBe(400)
    expect(replaced.body.error).toStartWith('caller.persona: a persona caller is played by a vendor model')
  })

  test('a run against the draft: each expectation passes or fails for its own reason, nothing billed or counted', async () => {
    const good = await scenario({
      ...CHAT,
      expectations: [
        { kind: 'field', name: 'name', equals: 'priya' },
        { kind: 'says', text: '7 am to 7 pm' },
        { kind: 'neverSays', text: 'closed' },
        { kind: 'tool', name: 'capture_lead' },
        { kind: 'ended', by: 'caller' },
        { kind: 'maxTurns', turns: 4 },
        { kind: 'slowestTurn', ms: 0 },
      ],
    })
    const bad = await scenario({
      ...CHAT,
      name: 'Wrong expectations',
      expectations: [
        { kind: 'field', name: 'name', oneOf: ['Asha', 'Ravi'] },
        { kind: 'says', text: 'we are closed' },
        { kind: 'neverSays', text: '7 am' },
        { kind: 'tool', name: 'escalate' },
        { kind: 'ended', by: 'agent' },
        { kind: 'maxTurns', turns: 2 },
      ],
    })
    const suite = (await api('POST', '/simulations/suites', { name: 'Web', agent, scenarios: [good, bad] })).body.id
    // Never published: website visitors could not reach it, a run of the draft can.
    const run = await runToEnd(suite)
    expect(run).toMatchObject({ status: 'done', passed: false, totals: { calls: 2, finished: 2, passed: 1, failed: 1 } })
    const [pass, fail] = run.results
    expect(pass.transcript.map((l: any) => [l.speaker, l.atMs])).toEqual([
      ['agent', 0],
      ['customer', 0],
      ['agent', 0],
      ['customer', 0],
      ['agent', 0],
      ['customer', 0],
      ['agent', 0],
    ])
    expect(pass.transcript[0].text).toBe('Hi, this is Bean There. How can I help?')
    expect(pass.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)).toEqual(CHAT.caller.lines.map((l) => l.say))
    expect(pass.status).toBe('passed')
    expect(pass.expectations.map((e: any) => e.passed)).toEqual([true, true, true, true, true, true, true])
    expect(pass.expectations[0].evidence).toEqual({ field: 'name', value: 'Priya' })
    expect(pass.expectations[3].evidence.tools).toContain('capture_lead')
    expect(pass.call).toBeNull()
    expect(pass.conversation).toStartWith('conv_')

    expect(fail.expectations.map((e: any) => e.passed)).toEqual([false, false, false, false, false, false])
    expect(fail.expectations[0].evidence).toEqual({ field: 'name', value: 'Priya' })
    expect(fail.expectations[1].evidence).toEqual({ lines: [] })
    expect(fail.expectations[2].evidence.lines[0].text).toContain('7 am')
    expect(fail.expectations[4].evidence).toEqual({ endedBy: 'caller', hangup: null })
    expect(fail.expectations[5].evidence).toEqual({ turns: 4 })

    // A test conversation marked simulated: no reply charged, no analytics.
    const conversations = await s.server.services.store.collection<any>({ name: 'conversations', indexes: [] })
    expect(await conversations.get(pass.conversation)).toMatchObject({ channel: 'web', test: true, simulated: true })
    const ledger = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    expect(await ledger.count({ workspaceId: dev.id })).toBe(0)
    expect((await api('GET', '/usage')).body.replies.used).toBe(0)
    const analytics = (await api('GET', `/agents/${agent}/analytics?days=1`)).body
    expect(analytics.totals).toMatchObject({ conversations: 0, messages: 0, agent_replies: 0, leads: 0, searches: 0 })

    // The same suite on the same draft: byte-identical transcripts and verdicts.
    const again = await runToEnd(suite)
    expect(judged(again)).toBe(judged(run))
  }, 90_000)

  test('a chat-app customer: answered on the chat app’s channel, STOP left unanswered, no contact made, nothing sent', async () => {
    const id = await scenario({
      channel: 'chatapp',
      name: 'By chat app',
      caller: { lines: [{ say: 'What time do you open on Saturday?' }, { say: 'My name is Priya.' }, { say: 'STOP' }] },
      expectations: [
        { kind: 'says', text: '7 am to 7 pm' },
        { kind: 'field', name: 'name', equals: 'Priya' },
        { kind: 'maxTurns', turns: 2 },
      ],
    })
    const suite = (await api('POST', '/simulations/suites', { name: 'Chat app', agent, scenarios: [id] })).body.id
    const run = await runToEnd(suite, { target: 'draft', seed: 3 })
    const [result] = run.results
    expect(result.status).toBe('passed')
    // The customer writes first (no greeting), and an opt-out said alone gets no answer.
    expect(result.transcript.map((l: any) => l.speaker)).toEqual(['customer', 'agent', 'customer', 'agent', 'customer'])
    expect(result.transcript.at(-1).text).toBe('STOP')
    const conversations = await s.server.services.store.collection<any>({ name: 'conversations', indexes: [] })
    const conversation = await conversations.get(result.conversation)
    expect(conversation).toMatchObject({ channel: 'chatapp', test: true, simulated: true, customer: { id: null } })
    expect(conversation.customer.phone).toStartWith('+1555')
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    expect(await contacts.count({ workspaceId: dev.id })).toBe(0)
    const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
    const replies = await messages.find({ conversationId: result.conversation, author: 'agent' })
    expect(replies.map((m: any) => [m.simulated, m.delivery])).toEqual([
      [true, undefined],
      [true, undefined],
    ])
    expect((await api('GET', '/usage')).body.replies.used).toBe(0)
  }, 60_000)

  test('a version is played as it was published; a draft with website chat off fails, saying why', async () => {
    const id = await scenario({ ...CHAT, name: 'Greeting', expectations: [{ kind: 'says', text: 'Bean There' }] })
    const suite = (await api('POST', '/simulations/suites', { name: 'Versions', agent, scenarios: [id] })).body.id
    const published = await fetch(`${s.url}/agents/${agent}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
    expect(published.status).toBe(200)
    expect((await api('PATCH', `/agents/${agent}`, { greeting: 'Hello!', widget: { enabled: false } })).status).toBe(200)
    const v1 = await runToEnd(suite, { target: 1 })
    expect(v1.results[0].status).toBe('passed')
    expect(v1.results[0].transcript[0].text).toBe('Hi, this is Bean There. How can I help?')
    const draft = await runToEnd(suite)
    expect(draft.results[0].status).toBe('failed')
    expect(draft.results[0].error).toContain('widget.enabled is false')
  }, 60_000)
})
