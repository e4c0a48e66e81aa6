/**
 * A simulation of an agent that leaves voicemails (`detectMachines` and a `voicemailMessage`): the
 * scripted caller is a person, so the network's answering-machine detection says so at once and
 * the agent greets it at once, not after the wait for a verdict that never comes
 * (ANSWERED_BY_WAIT_MS, after which the session speaks to whoever it is: `unknown`). On the
 * manual clock the call runs on its caller's audio, so that wait passes quickly here; what the
 * session logged it was told shows which way the greeting came. The clock is never moved.
 *
 * Speech engines: the sandbox doubles (scripted transcripts, formant voice).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'
import { agentWithFaq, runSuite, SHOP_FAQ } from '../support/simulations'

let s: TestServer
let dev: { id: string; key: string }
let agent: string
const { logger, lines } = capturedLogger('info')

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' }, undefined, logger)
  dev = await s.developer({ plan: 'free', name: 'Voicemail sims' })
  agent = await agentWithFaq(
    s,
    dev.key,
    {
      name: 'Bean There',
      greeting: 'Hello from Bean There!',
      voice: { answersCalls: true, recordCalls: false, detectMachines: true, voicemailMessage: 'Hi, this is Bean There. Please call us back.' },
    },
    SHOP_FAQ,
  )
})
afterAll(() => s?.stop())

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })

test('the scripted caller is answered as a person: the greeting plays at once', async () => {
  const made = await api('POST', '/simulations/scenarios', {
    name: 'Saturday hours',
    caller: { lines: [{ say: 'What time do you open on Saturday?' }] },
    expectations: [{ kind: 'says', text: '7 am' }],
  })
  expect(made.status).toBe(201)
  const suite = await api('POST', '/simulations/suites', { name: 'Voicemail agent', agent, scenarios: [made.body.id] })
  const run = await runSuite(s, dev.key, suite.body.id)
  const [result] = run.results
  expect(result.status).toBe('passed')
  expect(result.transcript.map((l: any) => [l.speaker, l.text]).slice(0, 2)).toEqual([
    ['agent', 'Hello from Bean There!'],
    ['customer', 'What time do you open on Saturday?'],
  ])
  // The network's verdict, not the session giving up on one.
  const verdicts = lines.filter((l) => l.call === result.call.id && l.msg === 'answered by').map((l) => l.by)
  expect(verdicts).toEqual(['human'])
}, 150_000)
