/**
 * bench:endurance — does one instance hold up under mixed load for minutes: memory flat, nothing
 * lost, no 5xx? The service runs in its own process (bench/service.ts) on 127.0.0.1 with the
 * engines a user gets by default on Twilio (no vendor keys: pocketsphinx listens, espeak-ng speaks,
 * Silero judges speech, the `local` model answers) against the local Twilio fake, and for
 * BENCH_MINUTES (10) this process keeps, all at once:
 *
 *   - BENCH_CALLS (50) phone calls live, each held 30 s and replaced as it hangs up (Twilio played
 *     with real Media Streams sockets: endurance-calls.ts);
 *   - BENCH_MESSAGE_RATE (200) inbound chat-app messages a second through the console's sandbox
 *     `inbound` route on a fixed schedule (an open loop), 2,000 customers on the agent's number and
 *     one message in 40 to a second number with external agents on: its `message.received` webhook
 *     is answered here with `POST /conversations/{id}/reply` (Idempotency-Key = the event id);
 *   - webhooks to 5 local endpoints (endurance-hooks.ts): v1 `*` for each of the three agents, one
 *     of them answering after 800 ms, and one legacy endpoint for every event type of the account;
 *   - 10 API reads and writes a second (agents, calls, conversations, the campaign; an agent PATCH,
 *     a webhook created and deleted);
 *   - one chat-app campaign to 5,000 contacts, started a third of the way in.
 *
 *   bun bench/endurance.ts         (BENCH_MINUTES=1 for a quick run; BENCH_STT=deepgram: Deepgram's
 *                                   adapter against its local fake instead of the local decoder)
 *
 * Every 30 s: the service's resident memory (/proc/<pid>/status), its JS heap and event-loop lag p99
 * over the 30 s (its /metrics: prom-client's process metrics; the lag histogram is reset at each
 * scrape), its CPU and the machine's load average. At the end, once the load stopped and deliveries
 * went quiet: every answer this process got by status, and from the stopped service's store every
 * event recorded against what each endpoint received (lost, duplicated), every message against its
 * reply and its events, every call against its call.completed and call.analysed. Targets: resident
 * memory at the end within 10% of after 1 minute, no 5xx. Bounded (RUN_LIMIT_MS), loopback only.
 */
import { rmSync } from 'node:fs'
import { startDeepgramFake } from '../test/fakes/deepgram'
import { startTwilioFake } from '../test/fakes/twilio'
import { runApiTraffic } from './endurance-api'
import { callNumberOf, runCalls } from './endurance-calls'
import { startReceiver } from './endurance-hooks'
import { runMessages } from './endurance-messages'
import { report } from './endurance-report'
import { type Sample, Sampler } from './endurance-samples'
import { loadavg } from './proc'
import { startBenchService } from './service'

const MINUTES = Number(process.env.BENCH_MINUTES ?? 10)
const SLOTS = Number(process.env.BENCH_CALLS ?? 50)
const MESSAGE_RATE = Number(process.env.BENCH_MESSAGE_RATE ?? 200)
const STT = process.env.BENCH_STT ?? 'default'
/** Each call's length once its stream is open: the agent's opening (~12 s of espeak-ng) and some silence after it. */
const HOLD_MS = 30_000
const SAMPLE_MS = 30_000
/** The slow endpoint's answer time: well inside v1's 10 s and legacy's 5 s timeouts, so slow, not failing. */
const SLOW_MS = 800
/** API reads and writes a second: a developer's dashboard and scripts beside the traffic. */
const API_RATE = 10
const CAMPAIGN_RECIPIENTS = 5_000
/** A client's patience: a request unanswered this long is abandoned and counted as timed out (status -1). */
const REQUEST_TIMEOUT_MS = 30_000
/** Creating the campaign is one request carrying 5,000 recipients: its client waits longer. */
const CAMPAIGN_TIMEOUT_MS = 120_000
/**
 * After the load stops, the service works through what it accepted: the drain ends once the legacy
 * endpoint (every event) has what the run should have produced, or no endpoint heard anything for
 * QUIET_MS, or after DRAIN_MS; what is still undone then shows in the report.
 */
const QUIET_MS = 30_000
const DRAIN_MS = 180_000
/** How long a stopping service may take after SIGTERM before it is killed: the bench has ended every call by then. */
const STOP_MS = 30_000
/** After the restart: stopped once no delivery came for longer than the service's 30 s sweep of undispatched events. */
const RESTART_QUIET_MS = 35_000
/** Set-up (contacts over HTTP, seconds here), the load, late answers (REQUEST_TIMEOUT_MS), the drain, two stops, the restart, the report: past it the run stops, failed. */
const RUN_LIMIT_MS = 4 * 60_000 + MINUTES * 60_000 + REQUEST_TIMEOUT_MS + 2 * DRAIN_MS + 2 * STOP_MS + 2 * 60_000
const LEGACY_TYPES = [
  'lead.captured',
  'conversation.escalated',
  'conversation.resolved',
  'call.completed',
  'call.analysed',
  'campaign.finished',
  'message.received',
  'chat.message.completed',
  'voice.call.ended',
]

if (!(MINUTES > 0 && MINUTES <= 60) || !(SLOTS >= 0 && SLOTS <= 500) || !(MESSAGE_RATE >= 0 && MESSAGE_RATE <= 2_000) || !['default', 'deepgram'].includes(STT)) {
  console.error('bench:endurance: BENCH_MINUTES must be 0–60, BENCH_CALLS 0–500, BENCH_MESSAGE_RATE 0–2,000, BENCH_STT default or deepgram')
  process.exit(2)
}

const statuses = new Map<string, Map<number, number>>()
/** The first answer of each route and status that was not a 2xx, to say what it was. */
const firstRefusals = new Map<string, string>()
const count = (label: string, status: number, body?: unknown) => {
  const byStatus = statuses.get(label) ?? new Map<number, number>()
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
  statuses.set(label, byStatus)
  if ((status < 200 || status >= 300) && !firstRefusals.has(`${label} ${status}`)) firstRefusals.set(`${label} ${status}`, JSON.stringify(body ?? null).slice(0, 200))
}

const fake = startTwilioFake()
const DEEPGRAM_KEY = 'bench-endurance-deepgram-key'
const deepgram = STT === 'deepgram' ? startDeepgramFake(DEEPGRAM_KEY) : null
let stopService = () => {}
const watchdog = setTimeout(() => {
  console.error(`bench:endurance: gave up after ${RUN_LIMIT_MS / 60_000} minutes`)
  stopService()
  process.exit(1)
}, RUN_LIMIT_MS)

// The developer's side: the external number's events are answered with a reply, keyed by the event id.
let api: (label: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }> = async () => ({ status: 0, body: null })
const replies = { asked: 0, answered: 0, inFlight: 0 }
const reply = async (eventId: string, conversationId: string) => {
  replies.asked++
  replies.inFlight++
  const r = await api(
    'POST /api/v1/conversations/{id}/reply',
    'POST',
    `/api/v1/conversations/${conversationId}/reply`,
    { text: 'Thanks, a person will write back shortly.' },
    { 'idempotency-key': eventId },
  )
  replies.inFlight--
  if (r.status >= 200 && r.status < 300) replies.answered++
}
const hooks = {
  external: startReceiver('v1 * (external-agents agent)', 0, (type, body, id) => {
    if (type === 'message.received') void reply(id, body.data.conversationId)
  }),
  legacy: startReceiver('legacy, every type, every agent', 0),
  calls: startReceiver('v1 * (calling agent)', 0),
  slow: startReceiver(`v1 * (calling agent), answers after ${SLOW_MS} ms`, SLOW_MS),
  messaging: startReceiver('v1 * (answering agent)', 0),
}

const serviceEnv = {
  TELEPHONY_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: fake.accountSid,
  TWILIO_AUTH_TOKEN: fake.authToken,
  TWILIO_API_BASE_URL: fake.url,
  ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
  ...(deepgram ? { STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.url } : {}),
}
const { service, base, dir, token } = await startBenchService('endurance', serviceEnv)
let restarted: typeof service | null = null
stopService = () => service.kill('SIGKILL')
const request = async (label: string, method: string, path: string, auth: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = REQUEST_TIMEOUT_MS) => {
  try {
    const res = await fetch(base + path, {
      signal: AbortSignal.timeout(timeoutMs),
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const answer = (await res.json().catch(() => null)) as any
    count(label, res.status, answer)
    return { status: res.status, body: answer }
  } catch (err) {
    // -1: no answer within REQUEST_TIMEOUT_MS (the client gave up); 0: the connection failed.
    const timedOut = err instanceof DOMException && err.name === 'TimeoutError'
    count(label, timedOut ? -1 : 0, String(err))
    return { status: 0, body: null }
  }
}
/** A set-up step: anything but the expected status stops the run. */
const must = async (expected: number, method: string, path: string, auth: string, body?: unknown) => {
  const r = await request(`set-up ${method}`, method, path, auth, body)
  if (r.status !== expected) throw new Error(`set-up: ${method} ${path} answered ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}
const metricsText = () =>
  fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
    (r) => r.text(),
    () => '',
  )

let calls: ReturnType<typeof runCalls> | null = null
try {
  const setupStart = performance.now()
  const dev = await must(201, 'POST', '/console/workspaces', token, { name: 'Bench endurance', plan: 'enterprise' })
  api = (label, method, path, body, headers) => request(label, method, path, dev.key, body, headers)
  const consolePath = `/console/workspaces/${dev.id}`
  const agent = async (name: string, extra: Record<string, unknown> = {}) => {
    const id = (await must(201, 'POST', '/api/v1/agents', dev.key, { name, ...extra })).id as string
    return id
  }
  const answering = await agent('Shop assistant')
  await must(201, 'POST', `/api/v1/agents/${answering}/knowledge`, dev.key, {
    title: 'Shop FAQ',
    text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.\n\nParking\n\nFree parking behind the shop.\n\nDelivery\n\nWe deliver within 5 km.\n\nRefunds\n\nRefunds take 3 to 5 working days.',
  })
  const external = await agent('Handed to our own bot')
  const calling = await agent('Clinic reminders', { voice: { answersCalls: true } })
  const scratch = await agent('Scratch')
  for (const id of [answering, external, calling]) await must(200, 'POST', `/agents/${id}/publish`, dev.key, {})
  await must(201, 'POST', `${consolePath}/phone-numbers`, token, { number: '+14155550100', source: 'rented', channel: 'chatapp', agent: answering })
  await must(201, 'POST', `${consolePath}/phone-numbers`, token, { number: '+14155550101', source: 'rented', channel: 'chatapp', agent: external })
  await must(200, 'PATCH', `${consolePath}/phone-numbers/${encodeURIComponent('+14155550101')}`, token, { externalAgents: true })
  await must(201, 'POST', `${consolePath}/phone-numbers`, token, { number: '+14155550200', source: 'rented', agent: calling })
  await must(201, 'POST', `${consolePath}/templates`, token, { name: 'promo', language: 'en', category: 'marketing', body: 'Hi {{1}}, our sale starts today', number: '+14155550100' })
  for (const [hook, id] of [
    [hooks.external, external],
    [hooks.calls, calling],
    [hooks.slow, calling],
    [hooks.messaging, answering],
  ] as const)
    await must(201, 'POST', '/api/v1/webhooks', dev.key, { agent: id, url: hook.url, events: ['*'] })
  await must(200, 'POST', '/webhooks/endpoints', dev.key, { url: hooks.legacy.url, event_types: LEGACY_TYPES })
  const recipients = Array.from({ length: CAMPAIGN_RECIPIENTS }, (_, i) => `+1415${String(5_000_000 + i).padStart(7, '0')}`)
  const contacts = [...Array.from({ length: SLOTS }, (_, s) => callNumberOf(s)), ...recipients]
  for (let i = 0; i < contacts.length; i += 16) await Promise.all(contacts.slice(i, i + 16).map((phone) => must(201, 'POST', `${consolePath}/contacts`, token, { phone })))
  statuses.clear()
  console.log(`bench:endurance — set up in ${((performance.now() - setupStart) / 1000).toFixed(1)} s; ${MINUTES} min of load on one instance (pid ${service.pid}); load average ${loadavg()}`)

  const t0 = performance.now()
  const loadEnd = t0 + MINUTES * 60_000
  const elapsed = () => (performance.now() - t0) / 1000

  calls = runCalls({ slots: SLOTS, holdMs: HOLD_MS, until: loadEnd, base, key: dev.key, fake, request: (label, method, path, auth, body) => request(label, method, path, auth, body) })

  // Messages: an open loop at MESSAGE_RATE, whatever the answers do.
  const { messages, done: messageLoop } = runMessages({
    rate: MESSAGE_RATE,
    until: loadEnd,
    elapsed,
    numbers: { answering: '+14155550100', external: '+14155550101' },
    post: (body) => request('POST /console/…/inbound', 'POST', `${consolePath}/inbound`, token, body),
  })

  // API reads and writes, one every 1/API_RATE s in turn.
  let campaign: string | null = null
  const apiLoop = runApiTraffic({
    api,
    rate: API_RATE,
    until: loadEnd,
    elapsed,
    agents: { read: answering, scratch },
    hookUrl: hooks.messaging.url,
    lastCall: () => calls!.stats.placed.at(-1),
    lastConversation: () => messages.accepted.at(-1)?.conversationId,
    campaign: () => campaign,
  })

  const campaignStart = (async () => {
    await Bun.sleep((MINUTES * 60_000) / 3)
    const c = await request(
      'POST /console/…/campaigns',
      'POST',
      `${consolePath}/campaigns`,
      token,
      { agent: answering, name: 'Sale', kind: 'chatapp', template: 'promo', recipients },
      {},
      CAMPAIGN_TIMEOUT_MS,
    )
    if (c.status !== 201) return
    campaign = c.body.id
    await request('POST /console/…/campaigns/{id}/start', 'POST', `${consolePath}/campaigns/${campaign}/start`, token)
  })()

  // Every 30 s: memory, CPU and load from /proc on the dot; heap and lag from /metrics (endurance-samples.ts).
  const samples: Sample[] = []
  const deliveredSoFar = () => Object.values(hooks).reduce((n, h) => n + h.requests, 0)
  const fiveXx = () => [...statuses.values()].reduce((n, m) => n + [...m].filter(([s]) => s >= 500 || s <= 0).reduce((k, [, c]) => k + c, 0), 0)
  const sampler = new Sampler({
    pid: service.pid,
    elapsed,
    metricsText,
    progress: () => ({
      accepted: messages.accepted.length,
      waiting: messages.inFlight,
      callsLive: calls!.stats.live(),
      placed: calls!.stats.placed.length,
      delivered: deliveredSoFar(),
      failed: fiveXx(),
    }),
  })
  const sample = () => sampler.take()
  const print = (s: Sample) => sampler.print(s)
  await metricsText() // resets the lag histogram: the first window starts with the load
  const scrapes: Promise<void>[] = []
  for (let k = 1; k * SAMPLE_MS <= MINUTES * 60_000; k++) {
    await Bun.sleep(Math.max(0, t0 + k * SAMPLE_MS - performance.now()))
    scrapes.push(
      sample().then((s) => {
        samples.push(s)
        print(s)
      }),
    )
  }
  await Promise.all(scrapes)
  samples.sort((a, b) => a.at - b.at)

  await Promise.all([messageLoop, apiLoop, campaignStart, calls.done])
  const drainStart = performance.now()
  // Each accepted message makes one event (its reply's chat.message.completed, or message.received); each call three; the campaign one.
  const expectedAtLegacy = messages.accepted.length + 3 * calls.stats.placed.length + (campaign ? 1 : 0)
  while (performance.now() - drainStart < DRAIN_MS) {
    const quiet = Object.values(hooks).every((h) => performance.now() - h.lastAt > QUIET_MS)
    if ((quiet || hooks.legacy.got.size >= expectedAtLegacy) && messages.inFlight === 0 && replies.inFlight === 0) break
    await Bun.sleep(250)
  }
  const drained = await sample()
  console.log(
    `  after the load, ${((performance.now() - drainStart) / 1000).toFixed(0)} s later (the legacy endpoint has ${hooks.legacy.got.size} of the ~${expectedAtLegacy} events the run should make):`,
  )
  print(drained)
  const finalMetrics = await metricsText()
  const campaignView = campaign ? (await api('GET /api/v1/campaigns/{id}', 'GET', `/api/v1/campaigns/${campaign}`)).body : null

  const stop = async (p: typeof service) => {
    p.kill('SIGTERM')
    const exited = await Promise.race([p.exited, Bun.sleep(STOP_MS).then(() => 'timeout' as const)])
    if (exited === 'timeout') p.kill('SIGKILL')
    return exited === 'timeout' ? `did not stop within ${STOP_MS / 1000} s of SIGTERM (killed)` : `exited ${exited}`
  }
  const exit = await stop(service)
  // What the service still owed when it stopped (v1 deliveries dropped from their lanes, legacy
  // delivery records, undispatched events) its next start delivers: it is started again on the
  // same data and stopped once the endpoints have been quiet for longer than its 30 s sweep.
  const firstStop = new Map(Object.values(hooks).map((h) => [h, h.got.size]))
  const again = await startBenchService('endurance', serviceEnv, { dir })
  restarted = again.service
  const restartedAt = performance.now()
  let heard = deliveredSoFar()
  let quietSince = performance.now()
  while (performance.now() - restartedAt < DRAIN_MS && performance.now() - quietSince < RESTART_QUIET_MS) {
    await Bun.sleep(250)
    if (deliveredSoFar() !== heard) {
      heard = deliveredSoFar()
      quietSince = performance.now()
    }
  }
  const restartExit = await stop(again.service)
  console.log(
    `  restarted on the same data: ${deliveredSoFar() - [...firstStop.values()].reduce((a, b) => a + b, 0)} more deliveries in ${((performance.now() - restartedAt) / 1000).toFixed(0)} s; it ${restartExit}`,
  )
  await report({
    firstStop,
    dir,
    workspaceId: dev.id,
    agents: { answering, external, calling },
    samples,
    drained,
    statuses,
    firstRefusals,
    messages,
    replies,
    calls: calls.stats,
    hooks,
    campaign: campaignView,
    recipients: CAMPAIGN_RECIPIENTS,
    finalMetrics,
    exit,
    engines: deepgram ? "Deepgram's adapter against its local fake (BENCH_STT=deepgram)" : 'the default (no STT_PROVIDER, TTS_PROVIDER or VAD set)',
  })
} finally {
  clearTimeout(watchdog)
  calls?.stop()
  for (const p of [service, restarted]) {
    if (!p) continue
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
    await p.exited
  }
  await fake.stop()
  deepgram?.stop()
  for (const h of Object.values(hooks)) h.stop()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(0)
