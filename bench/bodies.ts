/**
 * bench:bodies — what unauthenticated bodies cost the service (issue 45, "Memory and the event loop").
 *
 * Starts the real service (`bun src/index.ts`, TELEPHONY_PROVIDER=twilio, the WhatsApp Cloud API and
 * Telegram configured against loopback addresses nothing listens on) as a child process on
 * loopback, and a second one on TELEPHONY_PROVIDER=telnyx for the Telnyx webhook path (a service
 * mounts the callbacks of its own carrier only), reads each one's RSS from /proc/<pid>/status
 * (VmRSS) every 10 ms and polls its GET /health every 10 ms throughout, then:
 * 1. to every vendor callback path and the web visitor API, over raw sockets with no key or
 *    signature: 3 parallel bodies declaring Content-Length 1 GB (zeros streamed until the answer
 *    arrives, at most 64 MiB or 5 s: never the whole gigabyte), then 3 parallel chunked bodies of
 *    256 MB (the same, at most 256 MB). Targets: each answered 413 or 401 within 200 ms of its
 *    first byte; each service's RSS at most 50 MB above its level before; /health p99 ≤ 50 ms.
 * 2. 8 clients posting a 150,000-member object (~1.7 MB) in a loop for `--seconds` (10): to
 *    POST /api/v1/web/{webKey}/sessions with no key, then to POST /api/v1/agents with a key (a
 *    body its 2 MiB limit lets in, so the member bound does the refusing). Target: /health p99 ≤
 *    50 ms during each.
 * Prints the figures and whether each target is met. Kills only its own child, also on error.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, startChildService } from '../test/support/child-service'
import { rawUpload, type UploadResult } from '../test/support/raw-upload'

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '10' } } })
const WIDE_SECONDS = Number(args.seconds)

/** The issue's targets. */
const TARGET_ANSWER_MS = 200
const TARGET_RSS_GROWTH_MB = 50
const TARGET_HEALTH_P99_MS = 50
/** Bounds of one hostile upload: it stops at the answer, at these bytes, or at this time. */
const DECLARED_BYTES = 1024 * 1024 * 1024
const DECLARED_SEND_MAX = 64 * 1024 * 1024
const CHUNKED_BYTES = 256 * 1024 * 1024
const UPLOAD_TIMEOUT_MS = 5_000
const PARALLEL = 3
const WIDE_CLIENTS = 8
const WIDE_MEMBERS = 150_000
/** How often RSS and /health are sampled. */
const SAMPLE_MS = 10

const CALLBACK_PATHS = [
  '/telephony/twilio/status?call=ca_bench&attempt=1',
  '/telephony/twilio/amd?call=ca_bench&attempt=1',
  '/telephony/twilio/voice',
  '/telephony/twilio/transfer/answered',
  '/telephony/twilio/transfer/ended',
  '/telephony/twilio/warm/leg',
  '/telephony/twilio/warm/reply',
  '/telephony/twilio/warm/joined',
  '/messaging/whatsapp/webhook',
  '/messaging/telegram/webhook/bot_bench',
]
/** The Telnyx line's one webhook path, on the second service. */
const TELNYX_CALLBACK_PATHS = ['/telephony/telnyx/events']

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

const percentile = (values: number[], p: number): number => {
  if (!values.length) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** Polls /health every SAMPLE_MS until stopped; a poll still waiting counts as it ends. */
function healthPoller(base: string) {
  const latencies: number[] = []
  let failures = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const t = performance.now()
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
      latencies.push(performance.now() - t)
      if (!ok) failures++
      await Bun.sleep(SAMPLE_MS)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return { latencies, failures }
    },
  }
}

function rssWatcher(pid: number) {
  const before = rssMb(pid)
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid))
  }, SAMPLE_MS)
  return {
    stop() {
      clearInterval(timer)
      return { before, peak, after: rssMb(pid) }
    },
  }
}

const verdict = (met: boolean) => (met ? 'met' : 'NOT met')

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-bodies-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const consoleToken = 'bench-bodies-console-token-0123456789'
  const nowhere = `http://127.0.0.1:${await freePort()}`
  const child = await startChildService(port, {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    CONSOLE_TOKEN: consoleToken,
    PUBLIC_BASE_URL: base,
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: 'ACbench00000000000000000000000000',
    TWILIO_AUTH_TOKEN: 'bench-auth-token',
    TWILIO_API_BASE_URL: nowhere,
    CHATAPP_PROVIDER: 'whatsapp',
    WHATSAPP_ACCESS_TOKEN: 'bench-token',
    WHATSAPP_APP_SECRET: 'bench-secret',
    WHATSAPP_VERIFY_TOKEN: 'bench-verify',
    WHATSAPP_API_BASE_URL: nowhere,
    WHATSAPP_PHONE_NUMBER_IDS: '+14155550380=106540352242922',
    BOTAPP_PROVIDER: 'telegram',
    TELEGRAM_API_URL: nowhere,
  })
  const telnyxDir = mkdtempSync(join(tmpdir(), 'bench-bodies-telnyx-'))
  const telnyxPort = await freePort()
  const telnyxBase = `http://127.0.0.1:${telnyxPort}`
  const webhookKey = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')
  const telnyxChild = await startChildService(telnyxPort, {
    DATA_DIR: telnyxDir,
    LOG_LEVEL: 'error',
    CONSOLE_TOKEN: consoleToken,
    PUBLIC_BASE_URL: telnyxBase,
    TELEPHONY_PROVIDER: 'telnyx',
    TELNYX_API_KEY: 'KEYbench',
    TELNYX_CONNECTION_ID: '1494404757140276705',
    TELNYX_PUBLIC_KEY: webhookKey,
    TELNYX_API_BASE_URL: nowhere,
  }).catch(async (err: unknown) => {
    child.kill('SIGKILL')
    await child.exited
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(telnyxDir, { recursive: true, force: true })
    throw err
  })
  try {
    const post = async (path: string, token: string, body: unknown) => {
      const r = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`)
      return (await r.json()) as any
    }
    const ws = await post('/console/workspaces', consoleToken, { name: 'Bench bodies' })
    const agent = await post('/api/v1/agents', ws.key, { name: 'Bench agent' })
    const visitorPaths = [`/api/v1/web/${agent.webKey}/sessions`, `/api/v1/web/${agent.webKey}/messages`]
    const targets = [...CALLBACK_PATHS.map((path) => ({ base, path })), ...TELNYX_CALLBACK_PATHS.map((path) => ({ base: telnyxBase, path })), ...visitorPaths.map((path) => ({ base, path }))]
    const pid = child.pid
    console.log(`bench:bodies — the service (bun src/index.ts, pid ${pid}; on a Telnyx line, pid ${telnyxChild.pid}) on loopback, ${navigator.hardwareConcurrency} cores shared`)

    // 1. Declared 1 GB and chunked 256 MB, 3 at a time, to every path.
    const services = [
      { name: 'service', rss: rssWatcher(pid), health: healthPoller(base) },
      { name: 'Telnyx-line service', rss: rssWatcher(telnyxChild.pid), health: healthPoller(telnyxBase) },
    ]
    const rows: { path: string; kind: string; results: UploadResult[] }[] = []
    for (const [kind, options] of [
      ['declared 1 GB', { declared: DECLARED_BYTES, maxBytes: DECLARED_SEND_MAX, timeoutMs: UPLOAD_TIMEOUT_MS }],
      ['chunked 256 MB', { maxBytes: CHUNKED_BYTES, timeoutMs: UPLOAD_TIMEOUT_MS }],
    ] as const) {
      for (const { base: at, path } of targets) {
        const results = await Promise.all(Array.from({ length: PARALLEL }, () => rawUpload(at, path, options)))
        rows.push({ path, kind, results })
      }
    }
    const measured = await Promise.all(services.map(async (x) => ({ name: x.name, health: await x.health.stop(), memory: x.rss.stop() })))
    console.log(`\n1. ${PARALLEL} parallel unauthenticated uploads per path (declared: Content-Length 1 GB, zeros until answered; chunked: up to 256 MB)`)
    console.log('   path                                              kind             statuses     answered (ms, max)  sent before the answer (max)')
    let allAnswered = true
    for (const { path, kind, results } of rows) {
      const statuses = results.map((r) => r.status || (r.error ?? 'none')).join(',')
      const worst = Math.max(...results.map((r) => r.answeredMs ?? Number.POSITIVE_INFINITY))
      const ok = results.every((r) => (r.status === 413 || r.status === 401) && r.answeredMs !== null && r.answeredMs <= TARGET_ANSWER_MS)
      allAnswered &&= ok
      const sent = Math.max(...results.map((r) => r.sentBytes))
      console.log(
        `   ${path.padEnd(50)}${kind.padEnd(17)}${statuses.padEnd(13)}${(Number.isFinite(worst) ? worst.toFixed(1) : 'never').padStart(8)}${ok ? '' : ' !'}${`${(sent / 1024 / 1024).toFixed(1)} MiB`.padStart(24)}`,
      )
    }
    console.log(`   every upload answered 413/401 within ${TARGET_ANSWER_MS} ms: ${verdict(allAnswered)}`)
    for (const { name, health: hostileHealth, memory } of measured) {
      const growth = memory.peak - memory.before
      const p99 = percentile(hostileHealth.latencies, 99)
      console.log(
        `   ${name} RSS: ${memory.before.toFixed(0)} MB before, peak ${memory.peak.toFixed(0)} MB (+${growth.toFixed(1)} MB), ${memory.after.toFixed(0)} MB after; target growth < ${TARGET_RSS_GROWTH_MB} MB: ${verdict(growth < TARGET_RSS_GROWTH_MB)}`,
      )
      console.log(
        `   ${name} /health meanwhile: ${hostileHealth.latencies.length} polls, p50 ${percentile(hostileHealth.latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...hostileHealth.latencies).toFixed(1)} ms, ${hostileHealth.failures} failed; target p99 ≤ ${TARGET_HEALTH_P99_MS} ms: ${verdict(p99 <= TARGET_HEALTH_P99_MS && hostileHealth.failures === 0)}`,
      )
    }

    // 2. 8 clients of 150,000-member bodies, first without a key to the visitor API, then with one.
    const wide = `{${Array.from({ length: WIDE_MEMBERS }, (_, i) => `"k${i}":1`).join(',')}}`
    // Encoded once: the clients share the host's two cores with the service.
    const wideBytes = new TextEncoder().encode(wide)
    console.log(`\n2. ${WIDE_CLIENTS} clients posting a ${WIDE_MEMBERS.toLocaleString('en')}-member object (${(wide.length / 1e6).toFixed(2)} MB) in a loop, ${WIDE_SECONDS} s each`)
    for (const [label, path, headers] of [
      ['POST /api/v1/web/{webKey}/sessions, no key', visitorPaths[0], {}],
      ['POST /api/v1/agents, with a key', '/api/v1/agents', { authorization: `Bearer ${ws.key}` }],
    ] as const) {
      const poll = healthPoller(base)
      const until = performance.now() + WIDE_SECONDS * 1000
      const statuses = new Map<string, number>()
      const answerMs: number[] = []
      await Promise.all(
        Array.from({ length: WIDE_CLIENTS }, async () => {
          while (performance.now() < until) {
            const t = performance.now()
            const status = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: wideBytes }).then(
              async (r) => {
                await r.arrayBuffer()
                return String(r.status)
              },
              (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? e.message,
            )
            answerMs.push(performance.now() - t)
            statuses.set(status, (statuses.get(status) ?? 0) + 1)
          }
        }),
      )
      const { latencies, failures } = await poll.stop()
      const p99Wide = percentile(latencies, 99)
      console.log(
        `   ${label}: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}; each answered in p50 ${percentile(answerMs, 50).toFixed(1)} ms, p99 ${percentile(answerMs, 99).toFixed(1)} ms`,
      )
      console.log(
        `     /health meanwhile: ${latencies.length} polls, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99Wide.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms, ${failures} failed; target p99 ≤ ${TARGET_HEALTH_P99_MS} ms: ${verdict(p99Wide <= TARGET_HEALTH_P99_MS && failures === 0)}`,
      )
    }
  } finally {
    for (const c of [child, telnyxChild]) {
      c.kill('SIGKILL')
      await c.exited
    }
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(telnyxDir, { recursive: true, force: true })
  }
}

await main()
