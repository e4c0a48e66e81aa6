/**
 * bench:messaging — 10,000 inbound chat-app messages across 1,000 conversations, each answered by
 * the agent on the `local` model (no network) from a pasted document, on the sandbox platform.
 * The service is built in this process and messages enter through the inbound service (what the
 * console route and the WhatsApp webhook call), so the numbers are the messaging pipeline's own:
 * store writes, the engine, the platform send — not an HTTP client sharing the event loop.
 *
 *   bun bench/messaging.ts            (BENCH_MESSAGES=2000 for a quicker run)
 *
 * Prints messages/s (received and answered) and p50/p99 from receipt to the reply handed to the
 * platform. Targets (README "Benchmarks"): ≥ 1,000 messages/s, p99 ≤ 50 ms on this 2-core machine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { messagingFeature } from '../src/features/messaging'
import { tenancyFeature } from '../src/features/workspaces'
import { createLogger } from '../src/logger'
import { startServer } from '../src/server'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000)
const CONVERSATIONS = Math.min(1_000, MESSAGES)
/** Messages being taken in at once: a busy platform webhook delivers in parallel batches. */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8)
const TARGET_RATE = 1_000
const TARGET_P99_MS = 50
const QUESTIONS = ['What time do you open on Sunday?', 'Where can I park?', 'Do you deliver?', 'How long do refunds take?']

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN
const dir = mkdtempSync(join(tmpdir(), 'bench-messaging-'))
const server = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', CONSOLE_TOKEN: 'bench-messaging-console-token-0123' }), createLogger('silent'))
try {
  const { services } = server
  const base = server.url
  const console_ = (path: string, body: unknown) =>
    fetch(`${base}/console${path}`, { method: 'POST', headers: { authorization: `Bearer ${server.consoleToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<any>,
    )
  const dev = await console_('/workspaces', { name: 'Bench messaging', plan: 'enterprise' })
  const api = (path: string, body: unknown) =>
    fetch(`${base}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<any>,
    )
  const agent = (await api('/agents', { name: 'Bench agent' })).id
  await api(`/agents/${agent}/knowledge`, {
    title: 'Shop FAQ',
    text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.\n\nParking\n\nFree parking behind the shop.\n\nDelivery\n\nWe deliver within 5 km.\n\nRefunds\n\nRefunds take 3 to 5 working days.',
  })
  // Only a published agent answers customers.
  await fetch(`${base}/agents/${agent}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
  await console_(`/workspaces/${dev.id}/phone-numbers`, { number: '+14155550100', source: 'rented', channel: 'chatapp', agent })
  const workspace = await services.of(tenancyFeature).workspaceRepo.get(dev.id)
  const { inbound, sandbox } = services.of(messagingFeature)

  // Receipt times per customer, matched to that customer's replies in order (one thread answers in order).
  const waiting = new Map<string, number[]>()
  const latencies: number[] = []
  const original = sandbox.send.bind(sandbox)
  sandbox.send = async (request) => {
    const sent = await original(request)
    const t0 = waiting.get(request.to)?.shift()
    if (t0 !== undefined) latencies.push(performance.now() - t0)
    return sent
  }
  const customer = (i: number) => `+1415${String(3_000_000 + (i % CONVERSATIONS)).padStart(7, '0')}`

  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < MESSAGES; i = next++) {
        const from = customer(i)
        const list = waiting.get(from) ?? []
        list.push(performance.now())
        waiting.set(from, list)
        await inbound.receive(workspace!, { channel: 'chatapp', from, to: '+14155550100', text: QUESTIONS[i % QUESTIONS.length]! })
      }
    }),
  )
  const received = performance.now() - started
  await inbound.settled()
  const answered = performance.now() - started
  const sorted = [...latencies].sort((a, b) => a - b)
  const rate = MESSAGES / (answered / 1000)
  const p99 = percentile(sorted, 99)
  console.log(`bench:messaging — ${MESSAGES} inbound messages across ${CONVERSATIONS} conversations, local model, sandbox platform, ${CONCURRENCY} taken in at once`)
  console.log(`  received in ${(received / 1000).toFixed(2)} s; all answered in ${(answered / 1000).toFixed(2)} s; replies sent: ${latencies.length}`)
  console.log(`  messages/s answered: ${rate.toFixed(0)} (target ≥ ${TARGET_RATE}) — ${rate >= TARGET_RATE ? 'meets target' : 'BELOW TARGET'}`)
  console.log(
    `  receipt → reply sent: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target ≤ ${TARGET_P99_MS} ms) — ${p99 <= TARGET_P99_MS ? 'meets target' : 'ABOVE TARGET'}`,
  )
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
