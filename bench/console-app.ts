/**
 * bench:console-app — the console web app in headless Chromium against the service as deployed
 * (its own process, sandbox phone network and speech doubles, the system clock), in one run:
 *
 *   bun bench/console-app.ts          (BENCH_CALLS=6 calls at once by default; CHROMIUM=/path)
 *
 * Prints:
 *  (a) first load: bytes on the wire (compressed, headers included) from opening /console/app to
 *      the Live page showing with its stream open, sign-in included — the app's files and the API
 *      answers apart (target: ≤ 200 KB in all); and what the State charts page adds (elkjs, loaded
 *      there only, once);
 *  (b) live update latency: for every call row and pipeline state the page shows while
 *      BENCH_CALLS sandbox calls run at once, the time from the change (the row's write landing,
 *      the pipeline moving: the `at` each stream event carries) to the page having drawn it, p50,
 *      p95, max (target p95 ≤ 100 ms). Server and browser share the machine's wall clock.
 */
import { rmSync } from 'node:fs'
import puppeteer from 'puppeteer-core'
import { startBenchService } from './service'
import { percentile } from './stats'

const CALLS = Number(process.env.BENCH_CALLS ?? 6)
const chromium = process.env.CHROMIUM ?? Bun.which('chromium')
if (!chromium) {
  console.error('bench:console-app needs Chromium: apt-get install chromium (or CHROMIUM=/path/to/chrome)')
  process.exit(1)
}
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`

const { service, base, dir, token } = await startBenchService('console-app', { STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '20' })
const call = async (method: string, path: string, body?: unknown, key = token) => {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--mute-audio'] })
try {
  // The workspace: an agent answering the phone on one number, contacts to call, callees who talk.
  const dev = await call('POST', '/console/workspaces', { name: 'Bench', plan: 'scale' })
  const agent = await call('POST', '/api/v1/agents', { name: 'Bench', greeting: 'Hello!', voice: { answersCalls: true, recordCalls: true } }, dev.key)
  await call('POST', `/agents/${agent.id}/publish`, {}, dev.key)
  await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, { number: '+14155550600', source: 'rented', agent: agent.id })
  const phones = Array.from({ length: CALLS }, (_, i) => `+1415555${String(1000 + i)}`)
  for (const phone of phones) {
    await call('POST', `/console/workspaces/${dev.id}/contacts`, { phone })
    await call('PUT', `/console/sandbox/phones/${encodeURIComponent(phone)}`, {
      pickup: 'answer',
      ringMs: 800,
      lines: ['What time do you open?', 'And on Sunday?', 'Thanks, goodbye.'],
      hangupAfterMs: 12_000,
    })
  }

  // (a) First load, on a fresh page: every response's encoded bytes (the stream's bytes are not a load).
  const page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 900 })
  const cdp = await page.createCDPSession()
  await cdp.send('Network.enable')
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true })
  const urls = new Map<string, string>()
  const bytes = new Map<string, number>()
  cdp.on('Network.requestWillBeSent', (e) => void urls.set(e.requestId, e.request.url))
  cdp.on('Network.loadingFinished', (e) => void bytes.set(e.requestId, e.encodedDataLength))
  const tally = () => {
    const out = { files: 0, api: 0, requests: 0 }
    for (const [id, n] of bytes) {
      const path = new URL(urls.get(id)!).pathname
      if (path.startsWith('/console/app/stream')) continue
      out.requests++
      if (path === '/console/app' || path.startsWith('/console/app/v/')) out.files += n
      else out.api += n
    }
    return out
  }
  await page.goto(`${base}/console/app`, { waitUntil: 'load' })
  await page.waitForSelector('#token')
  await page.type('#token', token)
  await page.keyboard.press('Enter')
  await page.waitForSelector('#top:not([hidden])')
  await page.select('#workspace', dev.id)
  await page.waitForSelector('#stream-state[data-state="live"]')
  await page.waitForSelector('section h2#running-title')
  await page.waitForNetworkIdle({ idleTime: 300 }).catch(() => {})
  const first = tally()

  // (b) Live updates while calls run: the page reports each change it has drawn.
  await page.evaluate(() => {
    const samples: { kind: string; ms: number }[] = []
    Object.assign(window, { __samples: samples, __consoleSeen: (kind: string, at: number) => void samples.push({ kind, ms: Date.now() - at }) })
  })
  const placed: string[] = []
  await Promise.all(phones.map(async (to) => placed.push((await call('POST', '/api/v1/calls', { to, purpose: 'Hi, this is the bench calling.' }, dev.key)).id)))
  const deadline = Date.now() + 90_000
  for (;;) {
    const rows = await Promise.all(placed.map((id) => call('GET', `/api/v1/calls/${id}`, undefined, dev.key)))
    if (rows.every((r) => r.status === 'completed' && r.recording?.ready)) break
    if (Date.now() > deadline) throw new Error(`calls did not finish: ${rows.map((r) => r.status).join(', ')}`)
    await Bun.sleep(250)
  }
  await Bun.sleep(500)
  const samples: { kind: string; ms: number }[] = await page.evaluate(() => Reflect.get(window, '__samples'))

  // What the State charts page adds: its module and elkjs (fetched there only, then cached).
  bytes.clear()
  await page.goto(`${base}/console/app#/${dev.id}/charts?machine=call`)
  await page.waitForSelector('svg.chart g.state', { timeout: 30_000 })
  await page.waitForNetworkIdle({ idleTime: 300 }).catch(() => {})
  const charts = tally()
  // The layout runs in a Web Worker, whose own fetch this page's session does not see: its file, as sent.
  const script = await page.$eval('script[src*="vendor/elk-api.js"]', (el) => (el as HTMLScriptElement).src)
  const worker = await fetch(script.replace('elk-api.js', 'elk-worker.min.js'), { headers: { 'accept-encoding': 'br, gzip' }, decompress: false } as RequestInit)
  const workerBytes = (await worker.arrayBuffer()).byteLength

  const all = samples.map((s) => s.ms)
  const p95 = percentile(all, 95)
  const total = first.files + first.api
  console.log(`bench:console-app — ${CALLS} sandbox calls at once, Chromium headless, service in its own process`)
  console.log(
    `(a) first load (sign-in → Live, stream open): ${kb(total)} compressed in ${first.requests} requests — app files ${kb(first.files)}, API answers ${kb(first.api)}  (target ≤ 200 KB: ${total <= 200 * 1024 ? 'met' : 'MISSED'})`,
  )
  console.log(
    `    the State charts page adds ${kb(charts.files + charts.api + workerBytes)}: its module, the chart and elkjs's API ${kb(charts.files + charts.api)}, elkjs's layout worker ${kb(workerBytes)} (${worker.headers.get('content-encoding')}; fetched on that page only, then cached)`,
  )
  for (const kind of ['call', 'pipeline']) {
    const xs = samples.filter((s) => s.kind === kind).map((s) => s.ms)
    if (xs.length) console.log(`    ${kind.padEnd(8)} updates: ${xs.length}, p50 ${percentile(xs, 50)} ms, p95 ${percentile(xs, 95)} ms, max ${Math.max(...xs)} ms`)
  }
  console.log(
    `(b) live update latency, change → page drawn: ${all.length} updates, p50 ${percentile(all, 50)} ms, p95 ${p95} ms, max ${Math.max(...all)} ms  (target p95 ≤ 100 ms: ${p95 <= 100 ? 'met' : 'MISSED'})`,
  )
} finally {
  await browser.close()
  service.kill()
  await service.exited
  rmSync(dir, { recursive: true, force: true })
}
