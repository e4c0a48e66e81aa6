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
import { readFileSync, rmSync } from 'node:fs'
import { encodeMulaw, resample } from '../src/media/codecs'
import { twilioSignature } from '../src/providers/telephony/twilio-signature'
import { EspeakTts } from '../src/providers/tts/espeak'
import { startDeepgramFake } from '../test/fakes/deepgram'
import { startTwilioFake, streamOpening } from '../test/fakes/twilio'
import { cpuByRole, cpuMs, startBenchService } from './service'

const CALLS = Number(process.env.BENCH_CALLS ?? 300)
const RATE = Number(process.env.BENCH_RATE ?? 20)
const STT = process.env.BENCH_STT ?? 'local'
const SPEAK = process.env.BENCH_SPEAK !== '0'
const CAPACITY = process.env.BENCH_CAPACITY ? Number(process.env.BENCH_CAPACITY) : null
/** The overload step's bound on a refusal: a caller or client told "busy" at once, not after a wait. */
const REFUSAL_MS = 100
const QUESTIONS = [
  'what time do you open on saturday',
  'can i move my appointment to friday',
  'do i need to bring my insurance card',
  'how long will the visit take',
  'is there parking near the clinic',
]
/**
 * How long each callee stays on after its stream starts: the purpose below takes 15–16 s at
 * espeak-ng's 175 words a minute, and the agent's silence goodbye comes 30 s after it ends, so
 * 25 s hears the whole opening and nothing else — a silent caller's hold; a speaking caller stays
 * 40 s, time for two or three questions and their answers after the opening.
 */
const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? (SPEAK ? 40_000 : 25_000))
/**
 * A caller waits this long after its question for the agent to answer before going on anyway: a
 * person on the phone repeats themselves after about that much silence. (Callers that spoke on a
 * fixed cycle talked over every answer still being prepared on a busy host, so the agent withdrew
 * each one as unheard and answered none.)
 */
const PATIENCE_MS = 8_000
/** The answer is over once the agent's audio has played out and this much silence followed (the chart's turn pause is 500 ms). */
const ANSWER_OVER_MS = 700
/** A caller's first question starts at a random point of this span: over the opening or after it, so that callers do not all speak at once. */
const FIRST_QUESTION_MS = 20_000
/** Audible: 40 ms without audio is two of Twilio's 20 ms frames missing, a clear click or stutter. */
const GAP_MS = 40
const FRAME_MS = 20
const FRAME = 160
const RATE_HZ = 8_000
/** Bounds on the run: at most 2,000 calls, and every wait below gives up. */
const MAX_CALLS = 2_000
/** The whole run: a minute for set-up (contacts over HTTP, ~3 s here), the ramp, the hold, and a minute more; past it the run stops, failed. */
const RUN_LIMIT_MS = 60_000 + (CALLS / RATE) * 1000 + HOLD_MS + 60_000
/** A stream not attached, or not sent the agent's first message, this long after its call was answered counts as failed. */
const ATTACH_TIMEOUT_MS = 10_000
/** Refused with 4409 while the answer's status callback is still being applied: retried this often, this many times. */
const ATTACH_RETRY_MS = 50
const ATTACH_RETRIES = 20
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

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN
}
const numberOf = (i: number) => `+1415${String(3_000_000 + i).padStart(7, '0')}`
/** The whole machine's busy and total CPU time (jiffies) from /proc/stat: how contended the cores were. */
const hostCpu = () => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3]! + f[4]!
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}
const busyShare = (a: { busy: number; total: number }, b: { busy: number; total: number }) => (100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total)
/** ns a thread has run and has waited runnable for a core, from /proc/<pid>/task/<tid>/schedstat: a busy machine shows as waiting. */
const schedNs = (pid: number) => {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number)
  return { run: run!, wait: wait! }
}
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)

const SILENCE_B64 = Buffer.alloc(FRAME, 0xff).toString('base64')

/** One question a caller asked: when its last frame left, and when the agent's audio next arrived (null: not within PATIENCE_MS or the call). */
interface Question {
  endAt: number
  answeredAt: number | null
  askedFrames: number
}

/** Each question as Twilio's 20 ms mu-law frames, base64. */
async function questionFrames(): Promise<string[][]> {
  const tts = new EspeakTts()
  const out: string[][] = []
  for (const q of QUESTIONS) {
    const parts: Int16Array[] = []
    for await (const p of tts.synthesize(q, { voice: 'aria', language: 'en' })) parts.push(p)
    const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      all.set(p, at)
      at += p.length
    }
    const mulaw = encodeMulaw(resample(all, tts.sampleRate, RATE_HZ))
    const frames: string[] = []
    for (let i = 0; i + FRAME <= mulaw.length; i += FRAME) frames.push(Buffer.from(mulaw.subarray(i, i + FRAME)).toString('base64'))
    out.push(frames)
  }
  return out
}
const questions = SPEAK ? await questionFrames() : []

/** One callee: Twilio's side of a media stream, listening. */
class Peer {
  ws: WebSocket | null = null
  streamSid = `MZ${crypto.randomUUID().replace(/-/g, '')}`
  chunk = 0
  startedAt = 0
  /** When the agent audio buffered so far will have played; null before any (or after a clear). */
  dryAt: number | null = null
  marks: { name: string; at: number }[] = []
  firstAudioAt: number | null = null
  gaps: { at: number; ms: number }[] = []
  /** Time since the previous agent frame, for each frame after the first: how long the service left this caller on its buffer. */
  waits: number[] = []
  lastAudioAt: number | null = null
  /** The stages of set-up: the POST answered, the answer's status callback answered, the socket open. */
  placedAt = 0
  answeredAt = 0
  openedAt = 0
  done = false
  /** The question being asked: its frames still to send. */
  private script: string[] = []
  /** When this caller asks its next question (set once it has heard the answer to the last, or given up on it). */
  private nextAt = 0
  /** The question last asked, while its caller waits for the answer. */
  private asked: Question | null = null
  /** Every question this caller finished asking, and when the agent's audio next came. */
  readonly questions: Question[] = []
  /** The agent turn of the last audio frame (from the mark after it), and a dry spell before a frame not yet known to be inside that turn. */
  private lastTurn: string | null = null
  private pendingGap: { at: number; ms: number } | null = null

  constructor(readonly postedAt: number) {}

  open(url: string, signature: string, token: string, callSid: string): Promise<number | null> {
    return new Promise((resolve) => {
      // Bun's WebSocket takes headers: the upgrade carries X-Twilio-Signature as Twilio's does.
      const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature } } as never)
      this.ws = ws
      let settled = false
      // Nothing from the service in time: a failed attach (1011, as the bridge's own internal error).
      const timer = setTimeout(() => {
        if (settled) return
        settled = true
        ws.close()
        resolve(1011)
      }, ATTACH_TIMEOUT_MS)
      ws.onopen = () => {
        for (const message of streamOpening({ streamSid: this.streamSid, accountSid: 'ACbench', callSid, token })) ws.send(message)
        this.startedAt = this.openedAt = performance.now()
        live.add(this)
      }
      ws.onmessage = (e) => {
        if (!settled) {
          settled = true
          clearTimeout(timer)
          resolve(null)
        }
        this.receive(String(e.data))
      }
      ws.onclose = (e) => {
        live.delete(this)
        if (!settled) {
          settled = true
          clearTimeout(timer)
          resolve(e.code)
        }
      }
    })
  }

  receive(raw: string): void {
    const now = performance.now()
    const m = JSON.parse(raw) as { event: string; media?: { payload: string }; mark?: { name: string } }
    if (m.event === 'media') {
      const samples = (m.media!.payload.length * 3) / 4 - (m.media!.payload.endsWith('==') ? 2 : m.media!.payload.endsWith('=') ? 1 : 0)
      this.firstAudioAt ??= now
      if (this.asked && this.asked.answeredAt === null) this.asked.answeredAt = now
      if (this.lastAudioAt !== null) this.waits.push(now - this.lastAudioAt)
      this.lastAudioAt = now
      // A dry spell counts once the mark after this frame shows it is the same turn's audio.
      this.pendingGap = this.dryAt !== null && now - this.dryAt > GAP_MS ? { at: now, ms: now - this.dryAt } : null
      this.dryAt = Math.max(this.dryAt ?? now, now) + (samples * 1000) / RATE_HZ
    } else if (m.event === 'mark') {
      const turn = m.mark!.name.split('.')[0]!
      if (this.pendingGap && turn === this.lastTurn) this.gaps.push(this.pendingGap)
      this.pendingGap = null
      this.lastTurn = turn
      this.marks.push({ name: m.mark!.name, at: this.dryAt ?? now })
      this.echoDue(now)
    } else if (m.event === 'clear') {
      this.dryAt = null
      for (const mark of this.marks.splice(0)) this.echo(mark.name)
    }
  }

  /** Twilio's 20 ms: the caller's frame goes out, marks whose audio has played are echoed. */
  tick(now: number): void {
    const due = Math.floor((now - this.startedAt) / FRAME_MS)
    while (this.chunk < due) {
      this.chunk++
      const payload = this.nextFrame(now)
      this.ws!.send(
        `{"event":"media","sequenceNumber":"${this.chunk + 1}","media":{"track":"inbound","chunk":"${this.chunk}","timestamp":"${this.chunk * FRAME_MS}","payload":"${payload}"},"streamSid":"${this.streamSid}"}`,
      )
    }
    this.echoDue(now)
    if (now - this.startedAt >= HOLD_MS) this.hangUp()
  }

  /**
   * The caller's next 20 ms: a silent caller's, or its questions as a person asks them — a question,
   * then silence until the agent has answered (its audio came and has played out) or PATIENCE_MS
   * passed without an answer, then a pause as long as the question, then the next. The first
   * question starts at a random point of the first FIRST_QUESTION_MS, over the opening or after it.
   */
  nextFrame(now: number): string {
    if (!questions.length) return SILENCE_B64
    if (this.chunk <= 1) this.nextAt = now + Math.random() * FIRST_QUESTION_MS
    if (this.script.length) {
      this.spokenFrames++
      const frame = this.script.shift()!
      if (!this.script.length) {
        this.asked = { endAt: now, answeredAt: null, askedFrames: this.lastQuestionFrames }
        this.questions.push(this.asked)
      }
      return frame
    }
    if (this.asked) {
      const a = this.asked
      const heard = a.answeredAt !== null && (this.dryAt === null || now > this.dryAt + ANSWER_OVER_MS)
      if (heard || now - a.endAt > PATIENCE_MS) {
        this.asked = null
        this.nextAt = now + a.askedFrames * FRAME_MS
      }
      return SILENCE_B64
    }
    if (now < this.nextAt) return SILENCE_B64
    const q = questions[Math.floor(Math.random() * questions.length)]!
    this.script = q.slice(1)
    this.lastQuestionFrames = q.length
    this.spokenFrames++
    return q[0]!
  }
  private lastQuestionFrames = 0
  /** Frames of speech sent (of `chunk` in all). */
  spokenFrames = 0
  hungUpAt = 0

  echoDue(now: number): void {
    while (this.marks.length && this.marks[0]!.at <= now) this.echo(this.marks.shift()!.name)
  }

  echo(name: string): void {
    this.ws?.send(JSON.stringify({ event: 'mark', sequenceNumber: String(this.chunk + 1), streamSid: this.streamSid, mark: { name } }))
  }

  hangUp(): void {
    if (this.done) return
    this.done = true
    this.hungUpAt = performance.now()
    live.delete(this)
    this.ws?.send(JSON.stringify({ event: 'stop', sequenceNumber: String(this.chunk + 2), streamSid: this.streamSid, stop: { accountSid: 'ACbench', callSid: 'bench' } }))
    this.ws?.close(1000)
    hungUp.push(this)
  }
}

const live = new Set<Peer>()
const hungUp: Peer[] = []

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
      const peer = new Peer(postedAt)
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
    `  the machine: ${busyShare(hostStart, hostRamp).toFixed(0)}% of its cores busy during the ramp (the service's event loop ran ${((schedRamp.run - schedStart.run) / 1e7 / rampS).toFixed(0)}% of it and waited for a core ${((schedRamp.wait - schedStart.wait) / 1e7 / rampS).toFixed(0)}%), ${busyShare(hostRamp, hostEnd).toFixed(0)}% during the hold (this process ${((100 * (selfRamp - selfStart)) / 1000 / rampS).toFixed(0)}% and ${((100 * (selfEnd - selfRamp)) / 1000 / holdS).toFixed(0)}% of a core); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; this process's event loop stalled > ${GAP_MS} ms ${stalls.length} times (worst ${ms(Math.max(0, ...stalls.map((s) => s.ms)))})`,
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
