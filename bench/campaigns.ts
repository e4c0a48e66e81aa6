/**
 * bench:campaigns — a 10,000-recipient broadcast on the sandbox platform, unpaced (the sandbox has
 * no per-number limit; CAMPAIGN_SEND_RATE paces a real platform). The service runs in this process;
 * campaigns are created, started, paused and resumed over HTTP as a developer would.
 *
 *   bun bench/campaigns.ts            (BENCH_RECIPIENTS=2000 for a quicker run)
 *
 * Round 1: start → sent: messages/s (first to last send, and start to `sent`).
 * Round 2: a second broadcast paused after PAUSE_AFTER sends: time from the pause request to the
 * last send, and sends after the pause answered (only those already in flight may complete);
 * then resumed to the end. Duplicates (a recipient sent the same campaign twice) must be 0.
 * Targets (README "Benchmarks"): ≥ 2,000 sends/s; nothing but in-flight sends after the pause answers.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { messagingFeature } from '../src/features/messaging'
import { createLogger } from '../src/logger'
import { startServer } from '../src/server'

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 10_000)
const PAUSE_AFTER = Math.floor(RECIPIENTS / 4)
const TARGET_RATE = 2_000
/** The broadcast sender's window (src/features/campaigns/broadcast.ts SEND_WINDOW): what may be in flight at a pause. */
const IN_FLIGHT = 32
const CONTACT_CONCURRENCY = 16

const dir = mkdtempSync(join(tmpdir(), 'bench-campaigns-'))
const server = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', CONSOLE_TOKEN: 'bench-campaigns-console-token-0123' }), createLogger('silent'))
try {
  const base = server.url
  const req = (path: string, auth: string, method = 'POST', body?: unknown) =>
    fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }).then(
      (r) => r.json() as Promise<any>,
    )
  const consoleReq = (path: string, body?: unknown) => req(`/console${path}`, server.consoleToken, 'POST', body)
  const dev = await consoleReq('/workspaces', { name: 'Bench campaigns', plan: 'enterprise' })
  // A broadcast stops when the wallet cannot pay a message: enough for every recipient at the marketing price (0.025 USD).
  await consoleReq(`/workspaces/${dev.id}/wallet`, { creditMicro: RECIPIENTS * 25_000 })
  const api = (path: string, method = 'GET', body?: unknown) => req(`/api/v1${path}`, dev.key, method, body)
  const agent = (await api('/agents', 'POST', { name: 'Bench broadcaster' })).id
  // Starting a campaign needs a published agent (only the published snapshot talks to people).
  await req(`/agents/${agent}/publish`, dev.key, 'POST', {})
  await consoleReq(`/workspaces/${dev.id}/phone-numbers`, { number: '+14155550100', source: 'rented', channel: 'chatapp', agent })
  await consoleReq(`/workspaces/${dev.id}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'Hi {{1}}, our sale starts today' })
  const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+1415${String(2_000_000 + i).padStart(7, '0')}`)
  const t0 = performance.now()
  for (let i = 0; i < phones.length; i += CONTACT_CONCURRENCY) {
    await Promise.all(phones.slice(i, i + CONTACT_CONCURRENCY).map((phone, j) => consoleReq(`/workspaces/${dev.id}/contacts`, { phone, name: `Person ${i + j}` })))
  }
  console.log(`${RECIPIENTS} contacts imported in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  // Every send the platform takes, timed, per campaign round.
  const { sandbox } = server.services.of(messagingFeature)
  let log: { to: string; at: number }[] = []
  /** Called once when `log` reaches `count` sends (round 2's pause), so the bench does not poll. */
  let when: { count: number; then: () => void } | null = null
  const original = sandbox.send.bind(sandbox)
  sandbox.send = async (request) => {
    const sent = await original(request)
    log.push({ to: request.to, at: performance.now() })
    if (when && log.length >= when.count) {
      when.then()
      when = null
    }
    return sent
  }
  const duplicates = (entries: { to: string }[]) => entries.length - new Set(entries.map((e) => e.to)).size
  const waitFor = async (id: string, status: string) => {
    for (;;) {
      const c = await api(`/campaigns/${id}`)
      if (c.status === status) return c
      if (['failed', 'cancelled'].includes(c.status)) throw new Error(`campaign ${id} ended ${c.status}: ${c.lastError}`)
      // A developer polling every 100 ms; each read counts the rows by status (GET /campaigns/{id}).
      await Bun.sleep(100)
    }
  }
  const create = async (name: string) => {
    const t = performance.now()
    const c = await consoleReq(`/workspaces/${dev.id}/campaigns`, { agent, name, kind: 'chatapp', template: 'promo', recipients: phones })
    if (!c.id) throw new Error(`create failed: ${JSON.stringify(c)}`)
    console.log(`  created with ${RECIPIENTS} recipients in ${(performance.now() - t).toFixed(0)} ms`)
    return c.id as string
  }

  console.log('round 1: start → sent')
  const one = await create('Round 1')
  log = []
  const cpu0 = process.cpuUsage()
  const started = performance.now()
  await consoleReq(`/workspaces/${dev.id}/campaigns/${one}/start`)
  const done = await waitFor(one, 'sent')
  const ended = performance.now()
  // CPU this process used (all threads): on a shared machine, sends per CPU-second is what stays put.
  const cpu = process.cpuUsage(cpu0)
  const cpuSeconds = (cpu.user + cpu.system) / 1e6
  const firstLast = (log.at(-1)!.at - log[0]!.at) / 1000
  const rate = log.length / firstLast
  const duplicatesOne = duplicates(log)
  console.log(`  ${log.length} sends; ${rate.toFixed(0)} sends/s first to last send; ${(log.length / ((ended - started) / 1000)).toFixed(0)} sends/s start to sent; duplicates ${duplicates(log)}`)
  console.log(
    `  counts ${JSON.stringify(done.counts)}; CPU ${cpuSeconds.toFixed(2)} s over ${((ended - started) / 1000).toFixed(2)} s wall: ${(log.length / cpuSeconds).toFixed(0)} sends per CPU-second`,
  )

  console.log(`round 2: pause after ${PAUSE_AFTER} sends, then resume`)
  const two = await create('Round 2')
  log = []
  const reached = new Promise<void>((then) => (when = { count: PAUSE_AFTER, then }))
  await consoleReq(`/workspaces/${dev.id}/campaigns/${two}/start`)
  await reached
  const pauseAsked = performance.now()
  const paused = await api(`/campaigns/${two}/pause`, 'POST')
  const pauseAnswered = performance.now()
  const atAnswer = log.length
  await Bun.sleep(1_000)
  const lastSend = log.at(-1)!.at
  // Negative: the last send answered before the pause was even asked for.
  const afterAnswer = log.length - atAnswer
  console.log(
    `  pause answered ${paused.status} in ${(pauseAnswered - pauseAsked).toFixed(1)} ms; pause request → last send ${(lastSend - pauseAsked).toFixed(1)} ms; sends after the answer ${afterAnswer} (in flight allowed: ${IN_FLIGHT}); ${log.length} sent before resuming`,
  )
  await api(`/campaigns/${two}/resume`, 'POST')
  const finished = await waitFor(two, 'sent')
  console.log(`  resumed to sent: ${log.length} sends; duplicates ${duplicates(log)}; counts ${JSON.stringify(finished.counts)}`)

  const verdict = (ok: boolean) => (ok ? 'meets target' : 'MISSES target')
  console.log(
    `\nresult: ${rate.toFixed(0)} sends/s (${verdict(rate >= TARGET_RATE)} ≥ ${TARGET_RATE}); pause → last send ${(lastSend - pauseAsked).toFixed(1)} ms, ${afterAnswer} after the answer (${verdict(afterAnswer <= IN_FLIGHT)}); duplicates ${duplicatesOne + duplicates(log)} (must be 0)`,
  )
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
