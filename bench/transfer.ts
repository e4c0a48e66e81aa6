/**
 * bench:transfer — what bridging a warm transfer's two legs through our media bridge would add to
 * every word, the path docs/api/calls.md "Transfer" did not choose (the network joins the legs
 * itself: Twilio's `<Conference>`, the sandbox network's own join, so no audio of the joined call
 * passes through us and we add none). Each pair is two Twilio Media Streams clients on 127.0.0.1
 * (the caller's leg and the person's) and a relay in this process that does what a bridge would:
 * our TwilioSerializer decodes each 20 ms μ-law frame of one leg and encodes it for the other.
 * Both legs send in real time; a frame's latency is from its send to its arrival on the other leg
 * (frames keep their order on a socket, so the n-th sent is the n-th received).
 *
 *   bun bench/transfer.ts        BENCH_PAIRS (1,25) pairs at once, BENCH_SECONDS (10) each
 *
 * Prints per concurrency: frames relayed, one-way latency p50/p95/p99/max in ms, and the machine's
 * load average. The clients run in this process too, so a loaded host delays both. This is the relay alone on loopback: a real bridge adds the network path from
 * Twilio's edge to us and back again on top, in each direction. Loopback only, bounded.
 */
import { loadavg } from 'node:os'
import type { ServerWebSocket } from 'bun'
import { TwilioSerializer } from '../src/voice/serializers/twilio'

const PAIRS = (process.env.BENCH_PAIRS ?? '1,25').split(',').map(Number)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
/** Twilio Media Streams' frame: 20 ms of 8 kHz μ-law. */
const FRAME_MS = 20
const FRAME_BYTES = 160

interface Leg {
  serializer: TwilioSerializer
  peer: string
}

const legs = new Map<string, ServerWebSocket<{ id: string }>>()
const state = new Map<string, Leg>()

const server = Bun.serve<{ id: string }, never>({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req, srv) {
    const id = new URL(req.url).pathname.slice(1)
    return srv.upgrade(req, { data: { id } }) ? undefined : new Response('upgrade', { status: 400 })
  },
  websocket: {
    open(ws) {
      legs.set(ws.data.id, ws)
      const [pair, side] = ws.data.id.split('-')
      state.set(ws.data.id, { serializer: new TwilioSerializer(), peer: `${pair}-${side === 'a' ? 'b' : 'a'}` })
    },
    message(ws, message) {
      const leg = state.get(ws.data.id)!
      const frame = leg.serializer.deserialize(String(message))
      if (frame?.kind !== 'audio') return
      const peer = state.get(leg.peer)
      const out = peer?.serializer.serialize({ kind: 'audio', pcm: frame.pcm, sampleRate: frame.sampleRate })
      if (out) legs.get(leg.peer)?.send(out)
    },
    close(ws) {
      legs.delete(ws.data.id)
      state.delete(ws.data.id)
    },
  },
})

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN

async function openLeg(id: string, received: number[]): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/${id}`)
  ws.onmessage = () => received.push(performance.now())
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = reject
  })
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }))
  ws.send(
    JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid: `MZ${id}`,
      start: { streamSid: `MZ${id}`, callSid: `CA${id}`, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
    }),
  )
  return ws
}

async function run(pairs: number): Promise<void> {
  const sent = new Map<string, number[]>()
  const received = new Map<string, number[]>()
  const sockets: { id: string; ws: WebSocket }[] = []
  for (let p = 0; p < pairs; p++) {
    for (const side of ['a', 'b']) {
      const id = `${pairs}x${p}-${side}`
      sent.set(id, [])
      received.set(id, [])
      sockets.push({ id, ws: await openLeg(id, received.get(id)!) })
    }
  }
  await Bun.sleep(200)
  const payload = Buffer.from(new Uint8Array(FRAME_BYTES).fill(0x55)).toString('base64')
  const frames = (SECONDS * 1000) / FRAME_MS
  const load = loadavg()[0]!.toFixed(2)
  // Each leg sends on its own 20 ms clock, the pairs' clocks spread over the frame.
  await Promise.all(
    sockets.map(async ({ id, ws }, i) => {
      await Bun.sleep((i * FRAME_MS) / sockets.length)
      const start = performance.now()
      for (let n = 0; n < frames; n++) {
        const due = start + n * FRAME_MS
        const wait = due - performance.now()
        if (wait > 0) await Bun.sleep(wait)
        sent.get(id)!.push(performance.now())
        ws.send(JSON.stringify({ event: 'media', sequenceNumber: String(n + 2), streamSid: `MZ${id}`, media: { track: 'inbound', chunk: String(n + 1), timestamp: String(n * FRAME_MS), payload } }))
      }
    }),
  )
  await Bun.sleep(500)
  const latencies: number[] = []
  let lost = 0
  for (const { id } of sockets) {
    const peer = id.endsWith('-a') ? id.replace(/-a$/, '-b') : id.replace(/-b$/, '-a')
    const s = sent.get(id)!
    const r = received.get(peer)!
    lost += s.length - r.length
    for (let n = 0; n < Math.min(s.length, r.length); n++) latencies.push(r[n]! - s[n]!)
  }
  for (const { ws } of sockets) ws.close()
  latencies.sort((a, b) => a - b)
  const ms = (v: number) => v.toFixed(2)
  console.log(
    `${String(pairs).padStart(4)} pairs  ${String(latencies.length).padStart(7)} frames  lost ${lost}  one-way p50 ${ms(quantile(latencies, 0.5))}  p95 ${ms(quantile(latencies, 0.95))}  p99 ${ms(quantile(latencies, 0.99))}  max ${ms(latencies.at(-1) ?? NaN)} ms  load ${load} → ${loadavg()[0]!.toFixed(2)}`,
  )
  await Bun.sleep(300)
}

console.log(`bench:transfer — a warm transfer bridged through our relay (loopback, ${SECONDS} s per row, 20 ms μ-law frames both ways)`)
for (const pairs of PAIRS) await run(pairs)
server.stop(true)
