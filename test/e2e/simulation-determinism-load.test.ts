/**
 * A busy host on the manual clock: a suite run twice while spinning processes keep every core busy
 * (and the run's own calls at once) loses nothing — every word of each caller's script reaches the
 * agent and every call passes — where the host's time used to leak into the call (a stall heard as
 * a pause, answers cut, lines lost). Byte-identity between runs is checked on a quiet host
 * (simulations.test.ts); under this load one call in 16 still differed in one of three runs
 * (docs/api/simulations.md, What breaks determinism).
 *
 * Speech engines: the sandbox doubles on the agent's side (scripted transcripts, formant voice),
 * Silero VAD on the callee's real audio; the manual clock (test/support/server.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { availableParallelism } from 'node:os'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Parking

Free parking for customers is behind the shop, entrance on Mill Lane.`
const LINES = ['What time do you open on Saturday?', 'Where do customers park?', 'Is the parking free?', 'My name is Priya.', 'Thank you, goodbye.']
/** Calls of each run at once: with the spinning processes, enough that the service's own loop falls behind the audio. */
const COUNT = 8
/** Spinning processes: one more than the cores, so the service never has a core to itself. */
const HOGS = availableParallelism() + 1

let s: TestServer
let key: string
let suite: string
const hogs: ReturnType<typeof Bun.spawn>[] = []

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  const dev = await s.developer({ plan: 'scale', name: 'Busy host' })
  key = dev.key
  const agent = await s.api('POST', '/agents', { key, body: { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true }, collectFields: [{ name: 'name' }] } })
  expect(agent.status).toBe(201)
  expect((await s.api('POST', `/agents/${agent.body.id}/knowledge`, { key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
  const scenario = await s.api('POST', '/simulations/scenarios', {
    key,
    body: { name: 'Five lines', caller: { lines: LINES.map((say) => ({ say })) }, expectations: [{ kind: 'field', name: 'name', equals: 'Priya' }] },
  })
  expect(scenario.status).toBe(201)
  const made = await s.api('POST', '/simulations/suites', { key, body: { name: 'Busy', agent: agent.body.id, scenarios: [scenario.body.id] } })
  expect(made.status).toBe(201)
  suite = made.body.id
  for (let i = 0; i < HOGS; i++) hogs.push(Bun.spawn([process.execPath, '-e', 'for (;;) {}'], { stdout: 'ignore', stderr: 'ignore' }))
})
afterAll(async () => {
  for (const hog of hogs) hog.kill('SIGKILL')
  await Promise.all(hogs.map((h) => h.exited))
  await s?.stop()
})

async function run(): Promise<any> {
  const started = await s.api('POST', `/simulations/suites/${suite}/runs`, { key, body: { target: 'draft', count: COUNT, seed: 5 } })
  expect(started.status).toBe(202)
  const done = await until(
    'the run is done',
    () => s.api('GET', `/simulations/runs/${started.body.id}`, { key }),
    (r) => r.body.status === 'done',
    { withinMs: 400_000, everyMs: 500 },
  )
  return done.body
}

test('two runs on a busy host: every word of every call heard, every call passed', async () => {
  const once = await run()
  const again = await run()
  for (const r of [...once.results, ...again.results]) {
    // Every word of the script reached the agent, in order: no line lost or cut short by a stall.
    const heard = r.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)
    expect({ heard: heard.join(' '), status: r.status, error: r.error }).toEqual({ heard: LINES.join(' '), status: 'passed', error: null })
  }
}, 900_000)
