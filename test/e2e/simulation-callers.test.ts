/**
 * Scripted callers beyond plain turns, end to end: keys pressed on the keypad (in-band tones the
 * agent's side hears as `[keypad] …`), a line that waits out a longer pause, and a line said over
 * the agent some way into its answer (a barge-in that cuts it). Each new line member is checked
 * with its error naming it. How long each wait is, measured on the callee's audio clock, is
 * test/providers/telephony/sandbox-callee.test.ts's job; here the words and verdicts count.
 *
 * Speech engines: the sandbox doubles (scripted transcripts, formant voice); the manual clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, runSuite, SHOP_FAQ } from '../support/simulations'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'free', name: 'Keys' })
  agent = await agentWithFaq(
    s,
    dev.key,
    {
      name: 'Bean There',
      greeting: 'Hello from Bean There! Please type your account number on the keypad.',
      voice: { answersCalls: true, recordCalls: false },
      collectFields: [{ name: 'account', type: 'number', description: 'the account number the caller typed' }],
    },
    SHOP_FAQ,
  )
})
afterAll(() => s?.stop())

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })
const line = (lines: unknown[]) => api('POST', '/simulations/scenarios', { name: 'x', caller: { lines } })

describe('scripted callers: keys, waits, interruptions', () => {
  test('each new line member is checked, its error naming it', async () => {
    const cases: [unknown[], string][] = [
      [[{ digits: '12x' }], 'caller.lines[0].digits:'],
      [[{ digits: '' }], 'caller.lines[0].digits:'],
      [[{ say: 'Hi', digits: '1' }], 'caller.lines[0].digits:'],
      [[{ digits: '1', interrupt: true }], 'caller.lines[0].interrupt:'],
      [[{ say: 'Hi' }, { say: 'Stop', interrupt: true, waitMs: 100 }], 'caller.lines[1].waitMs:'],
      [[{ say: 'Hi', afterMs: 100 }], 'caller.lines[0].afterMs:'],
      [[{ say: 'Hi', waitMs: 60_001 }], 'caller.lines[0].waitMs'],
      [[{ say: 'Hi', interrupt: true, afterMs: -1 }], 'caller.lines[0].afterMs'],
      [[{ say: '> sneaks in as a barge-in' }], 'caller.lines[0].say:'],
      [[{ say: '[keypad] 1' }], 'caller.lines[0].say:'],
      [[{ noise: true, afterMs: 100 }], 'caller.lines:'],
    ]
    for (const [lines, field] of cases) {
      const r = await line(lines)
      expect({ lines, status: r.status }).toEqual({ lines, status: 400 })
      expect(r.body.error).toStartWith(field)
    }
    const ok = await line([
      { digits: '1234#', waitMs: 0 },
      { say: 'Hi', waitMs: 2500 },
      { say: 'Stop', interrupt: true, afterMs: 1200 },
      { noise: true, afterMs: 300 },
    ])
    expect(ok.status).toBe(201)
    expect(ok.body.caller.lines).toEqual([
      { digits: '1234#', waitMs: 0 },
      { say: 'Hi', waitMs: 2500 },
      { say: 'Stop', interrupt: true, afterMs: 1200 },
      { noise: true, afterMs: 300 },
    ])
  })

  test('a run: keys read as a field, a line after a long pause, a line over the agent’s answer', async () => {
    const made = await api('POST', '/simulations/scenarios', {
      name: 'Types, waits, cuts in',
      caller: {
        lines: [{ digits: '40521#' }, { say: 'What time do you open on Saturday?', waitMs: 2500 }, { say: 'Sorry, where do customers park?', interrupt: true, afterMs: 1200 }],
      },
      expectations: [
        { kind: 'field', name: 'account', equals: 40521 },
        { kind: 'says', text: 'Mill Lane' },
        { kind: 'neverSays', text: '2 pm on Sundays' },
      ],
    })
    expect(made.status).toBe(201)
    const suite = await api('POST', '/simulations/suites', { name: 'Keys', agent, scenarios: [made.body.id] })
    const run = await runSuite(s, dev.key, suite.body.id)
    const [result] = run.results
    const caller = result.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)
    expect({ caller, expectations: result.expectations.map((e: any) => [e.passed, e.evidence]) }).toMatchObject({
      caller: ['[keypad] 40521#', 'What time do you open on Saturday?', 'Sorry, where do customers park?'],
    })
    expect(result.status).toBe('passed')
    expect(result.expectations[0].evidence).toEqual({ field: 'account', value: 40521 })
    // The hours answer was cut where the caller came in: its last words were never spoken.
    const hours = result.transcript.find((l: any) => l.speaker === 'agent' && /7 am/.test(l.text))
    expect(hours?.text).toBeDefined()
    expect(hours.text).not.toContain('2 pm on Sundays')
  }, 150_000)
})
