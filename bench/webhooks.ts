/**
 * bench:webhooks — v1 webhook fan-out on loopback.
 *
 *   bun bench/webhooks.ts          (BENCH_EVENTS=2000 for a quicker run)
 *
 * 10,000 events, each fanned out to 10 local endpoints (Bun.serve on 127.0.0.1, subscribed to
 * every event), one of which answers only after 5 s. The same run then repeats with the 9 fast
 * endpoints alone, and prints both side by side: deliveries/s overall and for the 9 fast
 * endpoints, and their p50/p99 delivery latency (event published → request received). If the slow
 * endpoint slowed the others, the fast columns would differ between the two runs.
 *
 * The whole service runs in this process (real HTTP server, embedded store, local coordination,
 * system clock) in a temp DATA_DIR, with ALLOW_PRIVATE_WEBHOOK_TARGETS so it may reach loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { agentsFeature } from '../src/features/agents'
import { webhooksFeature } from '../src/features/webhooks'
import { tenancyFeature } from '../src/features/workspaces'
import { createLogger } from '../src/logger'
import { startServer } from '../src/server'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000)
const FAST = 9
// The slow endpoint of the target (README "Benchmarks"): it answers after 5 s (inside the 10 s v1 timeout, so it is slow, not dead).
const SLOW_MS = 5_000
// A run stops waiting for the fast endpoints after this long (it takes seconds): the bench is bounded.
const RUN_LIMIT_MS = 120_000
// Events published at once: overlaps store writes without a burst of 10,000 promises.
const PUBLISH_CONCURRENCY = 32

interface Endpoint {
  name: string
  url: string
  /** Arrival time (performance.now) per event id. */
  arrivals: Map<string, number>
  stop(): void
}

function receiver(name: string, delayMs: number): Endpoint {
  const arrivals = new Map<string, number>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // The slow endpoint holds sockets for 5 s; Bun's default idle timeout (10 s) is enough.
    async fetch(req) {
      arrivals.set(req.headers.get('x-service-event-id') ?? '', performance.now())
      await req.arrayBuffer()
      if (delayMs > 0) await Bun.sleep(delayMs)
      return new Response(null, { status: 204 })
    },
  })
  return { name, url: `http://127.0.0.1:${server.port}/hook`, arrivals, stop: () => void server.stop(true) }
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN)

interface RunResult {
  label: string
  seconds: number
  delivered: number
  fastDelivered: number
  fastRate: number
  overallRate: number
  p50: number
  p99: number
  slow: string
}

async function run(label: string, withSlow: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'))
  const endpoints = Array.from({ length: FAST }, (_, i) => receiver(`fast${i + 1}`, 0))
  const slow = withSlow ? receiver('slow', SLOW_MS) : null
  const all = slow ? [...endpoints, slow] : endpoints
  const server = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }), createLogger('silent'))
  const s = {
    workspaces: server.services.of(tenancyFeature).workspaces,
    agents: server.services.of(agentsFeature).agents,
    webhooks: server.services.of(webhooksFeature).webhooks,
    bus: server.services.bus,
  }
  try {
    const ws = await s.workspaces.createDeveloper({ name: 'Bench', plan: 'pro' })
    const agent = await s.agents.create({ workspace: ws, plan: 'pro' }, { name: 'Bench agent' })
    const hookIds = new Map<Endpoint, string>()
    for (const ep of all) hookIds.set(ep, (await s.webhooks.create(ws.id, { agent: agent.id, url: ep.url })).doc.id)

    const published = new Map<string, number>()
    const t0 = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: PUBLISH_CONCURRENCY }, async () => {
        while (next < EVENTS) {
          const n = next++
          const at = performance.now()
          const e = await s.bus.publish({
            type: 'lead.captured',
            workspaceId: ws.id,
            agentId: agent.id,
            data: { conversationId: `conv_${n}`, channel: 'web', test: false, name: `Lead ${n}`, email: null, phone: null, note: null },
          })
          published.set(e.id, at)
        }
      }),
    )
    const publishedIn = performance.now() - t0
    const deadline = Date.now() + RUN_LIMIT_MS
    while (endpoints.some((ep) => ep.arrivals.size < EVENTS) && Date.now() < deadline) await Bun.sleep(10)
    const fastEnd = Math.max(...endpoints.flatMap((ep) => [...ep.arrivals.values()]))
    const seconds = (fastEnd - t0) / 1000

    const latencies: number[] = []
    for (const ep of endpoints) for (const [id, at] of ep.arrivals) latencies.push(at - (published.get(id) ?? at))
    latencies.sort((a, b) => a - b)
    const fastDelivered = endpoints.reduce((n, ep) => n + ep.arrivals.size, 0)
    const delivered = fastDelivered + (slow?.arrivals.size ?? 0)
    let slowNote = 'not in this run'
    if (slow) {
      const view = await s.webhooks.present(await s.webhooks.get(ws.id, hookIds.get(slow)!))
      slowNote = `${slow.arrivals.size} requests received in the window; enabled: ${view.enabled}${view.delivery.lastError ? ` (${view.delivery.lastError})` : ''}`
    }
    console.log(`  ${label}: ${EVENTS} events published in ${(publishedIn / 1000).toFixed(2)} s; fast endpoints done after ${seconds.toFixed(2)} s`)
    return {
      label,
      seconds,
      delivered,
      fastDelivered,
      fastRate: fastDelivered / seconds,
      overallRate: delivered / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      slow: slowNote,
    }
  } finally {
    await server.stop()
    for (const ep of all) ep.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

console.log(`bench:webhooks — ${EVENTS} events × ${FAST} fast endpoints + 1 answering after 5 s (loopback, v1 deliveries)`)
const withSlow = await run('with the slow endpoint', true)
const without = await run('without it', false)

const rows: [string, (r: RunResult) => string][] = [
  ['deliveries/s, all endpoints', (r) => r.overallRate.toFixed(0)],
  ['deliveries/s, the 9 fast endpoints', (r) => r.fastRate.toFixed(0)],
  ['fast deliveries completed', (r) => `${r.fastDelivered} / ${EVENTS * FAST}`],
  ['fast p50 latency (ms)', (r) => r.p50.toFixed(1)],
  ['fast p99 latency (ms)', (r) => r.p99.toFixed(1)],
  ['time until fast endpoints done (s)', (r) => r.seconds.toFixed(2)],
]
const width = Math.max(...rows.map(([name]) => name.length))
console.log(`\n${''.padEnd(width)}  ${withSlow.label.padStart(24)}  ${without.label.padStart(12)}`)
for (const [name, cell] of rows) console.log(`${name.padEnd(width)}  ${cell(withSlow).padStart(24)}  ${cell(without).padStart(12)}`)
console.log(`\nslow endpoint: ${withSlow.slow}`)
const ratio = withSlow.fastRate / without.fastRate
console.log(`fast-endpoint throughput with the slow one present: ${(ratio * 100).toFixed(0)}% of without it (p99 ${withSlow.p99.toFixed(0)} ms vs ${without.p99.toFixed(0)} ms)`)
console.log('latency counts from publish: all events are published in about a second, faster than they can be delivered, so it is mostly time spent queued behind the burst.')
process.exit(0)
