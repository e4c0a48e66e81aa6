/**
 * bench:web — 500 website visitors chatting at once: each starts a session on the widget's visitor
 * API and sends 5 messages, reading each reply streamed as SSE, answered by the `local` model from
 * a pasted document. The service runs as its own process (`bun src/index.ts`, as deployed) so its
 * memory is its own; the load generator shares the machine's 2 cores.
 *
 *   npm run bench:web    (BENCH_SESSIONS, BENCH_MESSAGES per session, BENCH_THINK_MS between messages)
 *
 * The script raises Bun's client limit of 256 requests in flight (BUN_CONFIG_MAX_HTTP_REQUESTS):
 * 500 held events streams plus the messages need more.
 *
 * Visitors are people: between a reply and their next message each waits BENCH_THINK_MS (default
 * 2,000 ms, ±50%: reading a short reply and typing a short line), so 500 open sessions send ~250
 * messages/s. BENCH_THINK_MS=0 sends back to back (a stress test: then latency is queueing).
 * Prints messages/s, time to the first streamed token p50/p99 (request sent → first `token` event),
 * whole reply p50/p99, the service's CPU per message (load-independent), and its resident memory
 * per open session (RSS with every session open — its conversation stored and its widget's
 * events stream held open — idle 3 s, minus RSS before any, over the sessions).
 * Targets (README "Benchmarks"): p99 first token ≤ 50 ms with the `local` model, ≤ 50 KB per open session.
 */
import { readFileSync, rmSync } from 'node:fs'
import { createParser } from 'eventsource-parser'
import { cpuMs, startBenchService } from './service'

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 500)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 5)
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 2_000)
const TARGET_TTFT_MS = 50
const TARGET_KB = 50
const QUESTIONS = ['What time do you open on Sunday?', 'Where can I park?', 'Do you deliver?', 'How long do refunds take?', 'Thanks!']
const FAQ = `Opening hours
We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Parking
Free parking behind the shop, entrance on Mill Lane.

Delivery
We deliver within 5 km for orders over $20.

Refunds
Tell us within 48 hours and we refund you in full. Refunds take 3 to 5 working days to reach your card.`

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1])

// Every session comes from this one address: the per-address limit on new sessions is off.
const { service, base, dir, token: TOKEN } = await startBenchService('web', { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', VISITOR_SESSIONS_PER_MINUTE: '0' })
const post = async (path: string, body: unknown, auth?: string) => {
  const res = await fetch(base + path, { method: 'POST', headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}

/** One message: its time to the first token and to the whole reply, in ms. */
async function send(webKey: string, session: string, message: string): Promise<{ ttft: number; total: number }> {
  const t0 = performance.now()
  const res = await fetch(`${base}/api/v1/web/${webKey}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session, message }) })
  if (res.status !== 200) throw new Error(`message refused: ${res.status} ${await res.text()}`)
  let ttft = NaN
  let done = false
  const parser = createParser({
    onEvent(e) {
      if (e.event === 'token' && Number.isNaN(ttft)) ttft = performance.now() - t0
      if (e.event === 'reply') done = true
      if (e.event === 'error') throw new Error(e.data)
    },
  })
  if (!res.body) throw new Error('the message answer has no body')
  const decoder = new TextDecoder()
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }))
  if (!done) throw new Error('the stream ended without a reply')
  return { ttft, total: performance.now() - t0 }
}

try {
  const dev = (await post('/console/workspaces', { name: 'Bench web', plan: 'enterprise' }, TOKEN)).body
  const agent = (await post('/api/v1/agents', { name: 'Bench shop', model: 'local' }, dev.key)).body
  await post(`/api/v1/agents/${agent.id}/knowledge`, { text: FAQ, title: 'Shop FAQ' }, dev.key)
  if ((await post(`/agents/${agent.id}/publish`, {}, dev.key)).status !== 200) throw new Error('could not publish')
  // Warm-up (JIT, store pages), then the baseline.
  for (let i = 0; i < 20; i++) {
    const s = (await post(`/api/v1/web/${agent.webKey}/sessions`, {})).body.session
    await send(agent.webKey, s, QUESTIONS[i % QUESTIONS.length]!)
  }
  await Bun.sleep(500)
  const before = rssKb(service.pid)
  const cpuBefore = cpuMs(service.pid)

  const ttfts: number[] = []
  const totals: number[] = []
  let failed = 0
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(service.pid))), 100)
  const started = performance.now()
  const sessions: string[] = []
  // Each visitor's widget also holds the team's-messages stream open, as the page does.
  const listening: AbortController[] = []
  let streamsOpen = 0
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, v) => {
      const r = await post(`/api/v1/web/${agent.webKey}/sessions`, {})
      if (r.status !== 201) throw new Error(`session refused: ${r.status} ${JSON.stringify(r.body)}`)
      sessions.push(r.body.session)
      const abort = new AbortController()
      listening.push(abort)
      const events = await fetch(`${base}/api/v1/web/${agent.webKey}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session: r.body.session }),
        signal: abort.signal,
      })
      if (events.status !== 200 || !events.body) throw new Error(`events refused: ${events.status}`)
      const stream = events.body
      streamsOpen++
      void (async () => {
        try {
          for await (const _ of stream);
        } catch {
          /* aborted at the end */
        }
      })()
      for (let m = 0; m < MESSAGES; m++) {
        if (THINK_MS > 0) await Bun.sleep(THINK_MS * (0.5 + Math.random()))
        try {
          const t = await send(agent.webKey, r.body.session, QUESTIONS[(v + m) % QUESTIONS.length]!)
          ttfts.push(t.ttft)
          totals.push(t.total)
        } catch (err) {
          failed++
          if (failed <= 3) console.error(String(err))
        }
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  const after = rssKb(service.pid)
  const cpu = cpuMs(service.pid) - cpuBefore
  // The sessions stay open (nothing is closed); after 3 s idle the collector has run and the heap's garbage is gone.
  await Bun.sleep(3_000)
  const settled = rssKb(service.pid)
  ttfts.sort((a, b) => a - b)
  totals.sort((a, b) => a - b)
  for (const a of listening) a.abort()
  const perSession = (settled - before) / SESSIONS
  const p99 = percentile(ttfts, 99)
  console.log(`bench:web — ${SESSIONS} visitor sessions × ${MESSAGES} messages on the widget's visitor API, local model, SSE replies`)
  console.log(`  think time ${THINK_MS} ms ±50% between messages; service in its own process, embedded store, local coordination`)
  console.log(`  answered: ${ttfts.length}/${SESSIONS * MESSAGES}, failed: ${failed}, in ${seconds.toFixed(2)} s → ${(ttfts.length / seconds).toFixed(0)} messages/s`)
  console.log(`  first token p50 ${percentile(ttfts, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (target ≤ ${TARGET_TTFT_MS} ms) — ${p99 <= TARGET_TTFT_MS ? 'meets target' : 'ABOVE TARGET'}`)
  console.log(
    `  service CPU ${(cpu / ttfts.length).toFixed(2)} ms per message (${(cpu / 1000).toFixed(1)} s over the run); machine load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
  )
  console.log(`  whole reply p50 ${percentile(totals, 50).toFixed(2)} ms, p99 ${percentile(totals, 99).toFixed(2)} ms`)
  console.log(
    `  service RSS ${(before / 1024).toFixed(1)} MB before, ${(after / 1024).toFixed(1)} MB as the last reply ended (peak ${(peak / 1024).toFixed(1)} MB), ${(settled / 1024).toFixed(1)} MB with the ${SESSIONS} sessions open and idle 3 s, ${streamsOpen} events streams open`,
  )
  console.log(`  memory per open session: ${perSession.toFixed(1)} KB (target ≤ ${TARGET_KB} KB) — ${perSession <= TARGET_KB ? 'meets target' : 'ABOVE TARGET'}`)
} finally {
  service.kill('SIGTERM')
  await service.exited
  rmSync(dir, { recursive: true, force: true })
}
