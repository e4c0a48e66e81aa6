/**
 * bench:soak — do callers already on the line hear gaps while more calls dial in? The service runs
 * in its own process on 127.0.0.1 with TELEPHONY_PROVIDER=twilio, pointed at a local fake of
 * Twilio's REST API (test/fakes/twilio.ts) that lives in this process. This process then plays
 * Twilio for every call: it places BENCH_CALLS (300) calls through `POST /api/v1/calls` at
 * BENCH_RATE (20) a second on a fixed schedule (an open loop), answers each with a signed
 * `in-progress` status callback, and opens the call's media stream as Twilio does (the TwiML's
 * Stream URL, X-Twilio-Signature on the upgrade, the token as a custom parameter).
 *
 *   bun bench/soak.ts            (BENCH_CALLS=100 BENCH_RATE=10 for a quicker run)
 *
 * Each callee is a Media Streams peer: it sends a 20 ms mu-law frame every 20 ms, plays the
 * agent's audio in real time (a buffer that drains at 8,000 samples a second), echoes a mark once
 * the audio before it has played, and drops its buffer on `clear`. Callers speak: each asks
 * espeak-ng questions (synthesised once, sent as Twilio would) as a person does — the first at a
 * random moment of the first 20 s (over the opening or after it), then it waits for the answer (the
 * agent's audio, played out) or 8 s, pauses as long as the question, and asks the next — so the
 * decoders are really used; the share of the time they speak is printed, and how many questions
 * the agent's voice followed, after how long. BENCH_SPEAK=0 keeps them silent. A frame that arrives after the buffer ran dry by
 * more than GAP_MS, inside one agent turn (the marks name the turn), is a gap the caller heard.
 *
 * BENCH_CAPACITY=n is the overload step: the service runs with CALLS_MAX_LIVE=n and is offered
 * BENCH_CALLS (say 2n): the admitted calls must hear no gap and every refusal must be a 503 within
 * 100 ms. /health and a GET of the API are timed every 100 ms throughout (their p99).
 *
 * Prints: calls with a gap (during the ramp and after it), the worst gap, the longest a playing
 * caller waited for its next audio (what the service's playout lead must cover), POST → first
 * agent audio p50/p95 and its stages, the service's CPU (per call, by thread — event loop, speech
 * decoders, Silero, espeak-ng, JIT, GC — and as a share of a core during the ramp and the hold) and resident memory per live call, how busy the machine was and how long
 * the service's event loop waited for a core (all from /proc), and this process's own event-loop
 * stalls (a stall here would look like a gap, so they are counted). Every call is hung up HOLD_MS
 * after its stream started; the run stops by itself (RUN_LIMIT_MS at most), on loopback only.
 *
 * Engines: the default ones — espeak-ng speaks, Silero listens (the VAD on every frame of every
 * call), and the live pocketsphinx decoders (a pool shared by the calls) transcribe. BENCH_STT=
 * deepgram is the hosted profile: the Deepgram adapter streaming every frame to a local fake of
 * Deepgram's live API (test/fakes/deepgram.ts) in this process. Printed for the local engine: the
 * decoders' queue wait (the turn latency's `stt_queue` stage on /metrics). BENCH_PROFILE=<dir>
 * writes the service's CPU profile there.
 */
import { rmSync } from 'node:fs'
import { twilioSignature } from '../src/providers/telephony/twilio-signature'
import { startDeepgramFake } from '../test/fakes/deepgram'
import { startTwilioFake } from '../test/fakes/twilio'
import { busyShare, hostCpu, loadavg, rssKb, schedNs } from './proc'
import { cpuByRole, cpuMs, startBenchService } from './service'
import { ATTACH_TIMEOUT_MS, type Callers, FRAME_MS, GAP_MS, PATIENCE_MS, Peer, questionFrames } from './soak-callers'
import { percentile } from './stats'

const CALLS = Number(process.env.BENCH_CALLS ?? 300)
const RATE = Number(process.env.BENCH_RATE ?? 20)
const STT = process.env.BENCH_STT ?? 'local'
const SPEAK = process.env.BENCH_SPEAK !== '0'
const CAPACITY = process.env.BENCH_CAPACITY ? Number(process.env.BENCH_CAPACITY) : null
/** The overload step's bound on a refusal: a caller or client told "busy" at once, not after a wait. */
const REFUSAL_MS = 100
/**
 * How long each callee stays on after its stream starts: the purpose below takes 15–16 s at
 * espeak-ng's 175 words a minute, and the agent's silence goodbye comes 30 s after it ends, so
 * 25 s hears the whole opening and nothing else — a silent caller's hold; a speaking caller stays
 * 40 s, time for two or three questions and their answers after the opening.
 */
const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? (SPEAK ? 40_000 : 25_000))
/** Refused with 4409 while the answer's status callback is still being applied: retried this often, this many times. */
const ATTACH_RETRY_MS = 50
const ATTACH_RETRIES = 20
/** Bounds on the run: at most 2,000 calls, and every wait below gives up. */
const MAX_CALLS = 2_000
/** The whole run: a minute for set-up (contacts over HTTP, ~3 s here), the ramp, the hold, and a minute more; past it the run stops, failed. */
const RUN_LIMIT_MS = 60_000 + (CALLS / RATE) * 1000 + HOLD_MS + 60_000
/**
 * What the agent says first, 15–16 s of speech within docs/spec.md's 300 characters. Its first sentence
 * is each call's own (a name, a day, a time: 1,200 combinations), as a clinic's reminders are;
 * the rest is the campaign's, the same on every call (the service may keep its audio cached).
 */
const NAMES = ['Maria', 'James', 'Aisha', 'Chen', 'Olga', 'Pedro', 'Fatima', 'Liam', 'Priya', 'Noah', 'Yuki', 'Omar', 'Sofia', 'Ivan', 'Grace', 'Mateo', 'Leila', 'Tom', 'Ana', 'Kwame']
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']
const TIMES = ['nine', 'half past nine', 'ten', 'half past ten', 'eleven', 'noon', 'one', 'two', 'half past two', 'three', 'four', 'five']
const purposeOf = (i: number) =>
  `Hello ${NAMES[i % 20]}, this is the clinic calling about your appointment on ${DAYS[Math.floor(i / 20) % 5]} at ${TIMES[Math.floor(i / 100) % 12]}. We would like to confirm the time with you, and tell you what to bring. Please have your insurance card ready, and arrive ten minutes early. If the time does not suit you, we can find another one.`

if (
  !(CALLS > 0 && CALLS <= MAX_CALLS) ||
  !(RATE > 0 && RATE <= 200) ||
  !(HOLD_MS >= 1_000 && HOLD_MS <= 120_000) ||
  !['deepgram', 'local'].includes(STT) ||
  (CAPACITY !== null && !(CAPACITY >= 1 && CAPACITY <= MAX_CALLS))
) {
  console.error(`bench:soak: BENCH_CALLS must be 1–${MAX_CALLS}, BENCH_RATE 1–200, BENCH_HOLD_MS 1,000–120,000, BENCH_STT deepgram or local`)
  process.exit(2)
}

const numberOf = (i: number) => `+1415${String(3_000_000 + i).padStart(7, '0')}`

const live = new Set<Peer>()
const callers: Callers = { live, hungUp: [], holdMs: HOLD_MS, questions: SPEAK ? await questionFrames() : [] }

const fake = startTwilioFake()
let stopService = () => {}
const watchdog = setTimeout(() => {
  console.error(`bench:soak: gave up after ${RUN_LIMIT_MS / 1000} s`)
  stopService()
  process.exit(1)
}, RUN_LIMIT_MS)
const DEEPGRAM_KEY = 'bench-soak-deepgram-key'
const deepgram = STT === 'deepgram' ? startDeepgramFake(DEEPGRAM_KEY) : null
const { service, base, dir, token } = await startBenchService('soak', {
  TELEPHONY_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: fake.accountSid,
  TWILIO_AUTH_TOKEN: fake.authToken,
  TWILIO_API_BASE_URL: fake.url,
  ...(deepgram ? { STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.url } : { STT_PROVIDER: 'pocketsphinx' }),
  TTS_PROVIDER: 'espeak',
  // Without the overload step, no admission limit gets in the way of the count asked for.
  CALLS_MAX_LIVE: String(CAPACITY ?? 100_000),
})
stopService = () => service.kill('SIGKILL')
const request = async (method: string, path: string, auth: string, body?: unknown) => {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json().catch(() => null)) as any }
}

// This process's own event loop: a stall here delays frames we receive and would read as a gap.
const stalls: { at: number; ms: number }[] = []
let lastProbe = performance.now()
const probe = setInterval(() => {
  const now = performance.now()
  if (now - lastProbe > 10 + GAP_MS) stalls.push({ at: now, ms: now - lastProbe - 10 })
  lastProbe = now
}, 10)
const pacer = setInterval(() => {
  const now = performance.now()
  for (const p of live) p.tick(now)
}, FRAME_MS)

try {
  const dev = (await request('POST', '/console/workspaces', token, { name: 'Bench soak', plan: 'enterprise' })).body
  const agent = (await request('POST', '/api/v1/agents', dev.key, { name: 'Bench soak', voice: { answersCalls: true } })).body.id
  const published = await request('POST', `/agents/${agent}/publish`, dev.key, {})
  if (published.status !== 200) throw new Error(`could not publish the agent: ${published.status} ${JSON.stringify(published.body)}`)
  await request('POST', `/console/workspaces/${dev.id}/phone-numbers`, token, { number: '+14155550100', source: 'rented', agent })
  for (let i = 0; i < CALLS; i++) await request('POST', `/console/workspaces/${dev.id}/contacts`, token, { phone: numberOf(i) })

  const peers: Peer[] = []
  let refused = 0
  /** POST → answer for the refused placements, and whether each was a 503 with Retry-After. */
  const refusals: { ms: number; ok: boolean }[] = []
  let attachFailed = 0
  let attachRetries = 0
  /** Place call i, answer it, open its stream. */
  const run = async (i: number) => {
    const postedAt = performance.now()
    const r = await request('POST', '/api/v1/calls', dev.key, { to: numberOf(i), purpose: purposeOf(i) })
    if (r.status !== 202) {
      refusals.push({ ms: performance.now() - postedAt, ok: r.status === 503 && r.retryAfter !== null })
      return void refused++
    }
    const placedAt = performance.now()
    const id = r.body.id as string
    const sent = fake.calls.find((c) => c.form.get('Twiml')?.includes(`/media/${id}"`))
    if (!sent) return void refused++
    const twiml = sent.form.get('Twiml')!
    const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)![1]!
    const mediaToken = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]!
    if ((await fake.callback(sent.sid, { CallStatus: 'in-progress' })) !== 204) return void attachFailed++
    const answeredAt = performance.now()
    // The TwiML names the service's PUBLIC_BASE_URL (localhost:port); we dial the loopback address it serves on.
    const dial = streamUrl.replace(/^ws:\/\/[^/]+/, base.replace(/^http/, 'ws'))
    const signature = twilioSignature(fake.authToken, streamUrl, {})
    const deadline = performance.now() + ATTACH_TIMEOUT_MS
    for (let attempt = 0; ; attempt++) {
      const peer = new Peer(postedAt, callers)
      peer.placedAt = placedAt
      peer.answeredAt = answeredAt
      const closed = await peer.open(dial, signature, mediaToken, sent.sid)
      if (closed === null) {
        peers.push(peer)
        return
      }
      if (closed !== 4409 || attempt >= ATTACH_RETRIES || performance.now() > deadline) return void attachFailed++
      attachRetries++
      await Bun.sleep(ATTACH_RETRY_MS)
    }
  }

  // /health and one API read, timed every 100 ms through the ramp and the hold.
  const health: number[] = []
  const apiReads: number[] = []
  let timing = true
  const timer = (async () => {
    while (timing) {
      const a = performance.now()
      await fetch(`${base}/health`).then((r) => r.arrayBuffer())
      const b = performance.now()
      await request('GET', '/api/v1/calls?limit=1', dev.key)
      health.push(b - a)
      apiReads.push(performance.now() - b)
      await Bun.sleep(100)
    }
  })()
  const cpuStart = cpuMs(service.pid)
  const rolesStart = cpuByRole(service.pid)
  const loopStart = cpuMs(service.pid, true)
  const rssStart = rssKb(service.pid)
  const hostStart = hostCpu()
  const schedStart = schedNs(service.pid)
  const selfStart = cpuMs(process.pid)
  const rampStart = performance.now()
  const running: Promise<void>[] = []
  for (let i = 0; i < CALLS; i++) {
    const wait = rampStart + (i * 1000) / RATE - performance.now()
    if (wait > 0.5) await Bun.sleep(wait)
    running.push(run(i).catch(() => void attachFailed++))
  }
  await Promise.all(running)
  const rampEnd = performance.now()
  const cpuRamp = cpuMs(service.pid)
  const hostRamp = hostCpu()
  const schedRamp = schedNs(service.pid)
  const selfRamp = cpuMs(process.pid)
  // Every placed call is live now (none is held shorter than the ramp takes to place the rest at the default sizes).
  const rssPeak = rssKb(service.pid)
  const livePeak = live.size
  // The hold: until every callee has hung up (each HOLD_MS after its stream started), bounded.
  const holdDeadline = performance.now() + HOLD_MS + ATTACH_TIMEOUT_MS
  while (live.size && performance.now() < holdDeadline) await Bun.sleep(100)
  for (const p of [...live]) p.hangUp()
  const holdEnd = performance.now()
  timing = false
  await timer
  const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()
  const cpuEnd = cpuMs(service.pid)
  const rolesEnd = cpuByRole(service.pid)
  const loopEnd = cpuMs(service.pid, true)
  const hostEnd = hostCpu()
  const selfEnd = cpuMs(process.pid)

  const withGap = peers.filter((p) => p.gaps.length)
  const rampGaps = peers.filter((p) => p.gaps.some((g) => g.at <= rampEnd))
  const worst = Math.max(0, ...peers.flatMap((p) => p.gaps.map((g) => g.ms)))
  const perCallGap = withGap.map((p) => p.gaps.reduce((n, g) => n + g.ms, 0))
  const ms = (x: number) => `${x.toFixed(0)} ms`
  const waits = peers.flatMap((p) => p.waits)
  const heard = peers.filter((p) => p.firstAudioAt !== null)
  const stage = (f: (p: Peer) => number) => {
    const xs = heard.map(f)
    return `${ms(percentile(xs, 50))}/${ms(percentile(xs, 95))}`
  }
  const firstAudio = peers.filter((p) => p.firstAudioAt !== null).map((p) => p.firstAudioAt! - p.postedAt)
  const rampS = (rampEnd - rampStart) / 1000
  const holdS = (holdEnd - rampEnd) / 1000
  console.log(
    `bench:soak — ${CALLS} calls placed at ${RATE}/s through POST /api/v1/calls (Twilio's REST API and media streams played by this process over loopback), callees listening, held ${HOLD_MS / 1000} s each; espeak-ng, Silero, ${deepgram ? "Deepgram's adapter against its local fake" : 'the local pocketsphinx engine'}`,
  )
  console.log(
    `  streams: ${peers.length} attached (${attachRetries} retried after 4409), ${refused} placements refused, ${attachFailed} failed to attach; ${livePeak} live at the end of the ramp; ${firstAudio.length} heard the agent`,
  )
  console.log(
    `  calls with a gap (> ${GAP_MS} ms of silence inside the agent's turn): ${withGap.length}/${peers.length} (${rampGaps.length} during the ${rampS.toFixed(1)} s ramp); worst gap ${ms(worst)}; gap per affected call p50 ${ms(percentile(perCallGap, 50) || 0)}, max ${ms(Math.max(0, ...perCallGap))}`,
  )
  console.log(`  longest the service sent a playing caller nothing (the lead must cover it): p99 ${ms(percentile(waits, 99))}, p99.9 ${ms(percentile(waits, 99.9))}, max ${ms(Math.max(0, ...waits))}`)
  console.log(
    `  POST → first agent audio at the callee: p50 ${ms(percentile(firstAudio, 50))}, p95 ${ms(percentile(firstAudio, 95))}, max ${ms(Math.max(...firstAudio))}; p50/p95 of its stages: POST ${stage((p) => p.placedAt - p.postedAt)}, answer callback ${stage((p) => p.answeredAt - p.placedAt)}, socket open ${stage((p) => p.openedAt - p.answeredAt)}, first audio ${stage((p) => p.firstAudioAt! - p.openedAt)}`,
  )
  console.log(
    `  service CPU: ${((cpuEnd - cpuStart) / peers.length).toFixed(1)} ms per call (event loop ${((loopEnd - loopStart) / peers.length).toFixed(1)}), ${((100 * (cpuRamp - cpuStart)) / 1000 / rampS).toFixed(0)}% of a core during the ramp, ${((100 * (cpuEnd - cpuRamp)) / 1000 / holdS).toFixed(0)}% during the hold; resident memory ${((rssPeak - rssStart) / Math.max(1, livePeak)).toFixed(0)} KB per live call (${(rssStart / 1024).toFixed(0)} → ${(rssPeak / 1024).toFixed(0)} MB)`,
  )
  const byRole = [...rolesEnd].map(([role, ms]) => [role, (ms - (rolesStart.get(role) ?? 0)) / Math.max(1, peers.length)] as const).sort((a, b) => b[1] - a[1])
  // The decoders' work follows how much the callers said, not how many calls there were: per second of speech it compares across runs.
  const spokenS = (peers.reduce((n, p) => n + p.spokenFrames, 0) * FRAME_MS) / 1000
  const decodersMs = byRole.find(([role]) => role === 'speech decoders')?.[1] ?? 0
  console.log(
    `  service CPU per call by thread: ${byRole.map(([role, ms]) => `${role} ${ms.toFixed(0)} ms`).join(', ')}${spokenS ? `; speech decoders ${((decodersMs * peers.length) / spokenS).toFixed(0)} ms per second the callers spoke (${spokenS.toFixed(0)} s)` : ''}`,
  )
  console.log(
    `  the machine: ${busyShare(hostStart, hostRamp).toFixed(0)}% of its cores busy during the ramp (the service's event loop ran ${((schedRamp.run - schedStart.run) / 1e7 / rampS).toFixed(0)}% of it and waited for a core ${((schedRamp.wait - schedStart.wait) / 1e7 / rampS).toFixed(0)}%), ${busyShare(hostRamp, hostEnd).toFixed(0)}% during the hold (this process ${((100 * (selfRamp - selfStart)) / 1000 / rampS).toFixed(0)}% and ${((100 * (selfEnd - selfRamp)) / 1000 / holdS).toFixed(0)}% of a core); load average ${loadavg()}; this process's event loop stalled > ${GAP_MS} ms ${stalls.length} times (worst ${ms(Math.max(0, ...stalls.map((s) => s.ms)))})`,
  )
  if (!deepgram) {
    const stage = (suffix: string) => Number(new RegExp(`agent_platform_turn_latency_seconds_${suffix}\\{stage="stt_queue"\\} (\\S+)`).exec(metrics)?.[1] ?? NaN)
    const count = stage('count') || 0
    const buckets = [...metrics.matchAll(/agent_platform_turn_latency_seconds_bucket\{le="([^"]+)",stage="stt_queue"\} (\S+)/g)].map(
      (m) => [Number(m[1] === '+Inf' ? Infinity : m[1]), Number(m[2])] as const,
    )
    const p95 = buckets.find(([, n]) => n >= 0.95 * count)?.[0]
    const refusedUtterances = /^agent_platform_stt_utterances_refused_total (\S+)$/m.exec(metrics)?.[1]
    console.log(
      `  decoder queue wait (turns the service answered, counted once their answer played: ${count}): mean ${count ? ms((1000 * stage('sum')) / count) : '—'}, p95 ≤ ${p95 === undefined ? '—' : p95 === Infinity ? '> 10 s' : ms(p95 * 1000)}; utterances refused for want of a decoder: ${refusedUtterances ?? 0}; callers ${SPEAK ? 'speaking' : 'silent'}`,
    )
  }
  if (SPEAK) {
    const asked = peers.flatMap((p) => p.questions.map((q) => ({ ...q, hungUpAt: p.hungUpAt || performance.now() })))
    const answered = asked.filter((q) => q.answeredAt !== null)
    const unanswered = asked.filter((q) => q.answeredAt === null && q.hungUpAt - q.endAt >= PATIENCE_MS)
    const toAnswer = answered.map((q) => q.answeredAt! - q.endAt)
    const spoken = peers.reduce((n, p) => n + p.spokenFrames, 0)
    const frames = peers.reduce((n, p) => n + p.chunk, 0)
    console.log(
      `  callers' questions: ${asked.length} asked (callers speaking ${((100 * spoken) / Math.max(1, frames)).toFixed(0)}% of the time); ${answered.length} followed by the agent's voice (question's end → the agent's next audio p50 ${ms(percentile(toAnswer, 50))}, p95 ${ms(percentile(toAnswer, 95))}), ${unanswered.length} not within ${PATIENCE_MS / 1000} s, ${asked.length - answered.length - unanswered.length} cut short by the hang-up`,
    )
  }
  const refusedOk = refusals.filter((r) => r.ok).length
  const refusedMs = refusals.map((r) => r.ms)
  console.log(
    `  /health p50 ${ms(percentile(health, 50))}, p99 ${ms(percentile(health, 99))}, max ${ms(Math.max(0, ...health))}; GET /calls p50 ${ms(percentile(apiReads, 50))}, p99 ${ms(percentile(apiReads, 99))} (${health.length} samples, every 100 ms)`,
  )
  if (CAPACITY !== null) {
    console.log(
      `  overload: CALLS_MAX_LIVE=${CAPACITY}, ${CALLS} offered; ${peers.length} admitted, ${refusals.length} refused (${refusedOk} as 503 with Retry-After); refusal answered p50 ${ms(percentile(refusedMs, 50) || 0)}, p99 ${ms(percentile(refusedMs, 99) || 0)}, max ${ms(Math.max(0, ...refusedMs))}`,
    )
    const met = withGap.length === 0 && refusedOk === refusals.length && Math.max(0, ...refusedMs) <= REFUSAL_MS
    console.log(`  target: 0 gaps for admitted calls, every refusal a 503 within ${REFUSAL_MS} ms — ${met ? 'met' : 'NOT MET'}`)
  } else console.log(`  target: 0 calls with a gap — ${withGap.length === 0 ? 'met' : 'NOT MET'}`)
} finally {
  clearTimeout(watchdog)
  clearInterval(probe)
  clearInterval(pacer)
  for (const p of [...live]) p.hangUp()
  if (service.exitCode === null && service.signalCode === null) service.kill('SIGTERM')
  await service.exited
  await fake.stop()
  deepgram?.stop()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(0)
