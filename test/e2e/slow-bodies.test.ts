/**
 * Slow request bodies against the real server over raw TCP (node:net): a client that declares
 * `Content-Length: 100000` and then sends a byte every 200 ms is answered 408 once the grace has
 * passed and its connection is closed; many such connections from one client are all cut, the ones
 * past the per-client cap sooner; a normal request is unaffected meanwhile. A body nobody reads
 * (no such route) is answered at once and its connection closed rather than read forever.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { BODY_GRACE_MS, MAX_SLOW_BODIES_PER_CLIENT, SLOW_BODY_MS } from '../../src/http/body-deadline'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let port: number
let key: string
let agentId: string

beforeAll(async () => {
  s = await startTestServer()
  port = Number(new URL(s.url).port)
  key = (await s.developer()).key
  agentId = (await s.api('POST', '/agents', { key, body: { name: 'Slow' } })).body.id
})
afterAll(() => s?.stop())

interface Slow {
  socket: Socket
  answer: Promise<{ text: string; at: number; closedAt: number }>
}

/** Declares a 100,000-byte JSON body and sends one byte every 200 ms until the server answers. */
function slowClient(path: string): Slow {
  const socket = connect(port, '127.0.0.1')
  const t0 = Date.now()
  let text = ''
  let at = 0
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`)
  const drip = setInterval(() => !socket.destroyed && socket.write(' '), 200)
  const answer = new Promise<{ text: string; at: number; closedAt: number }>((resolve) => {
    socket.on('data', (d) => {
      at ||= Date.now() - t0
      text += d.toString()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(drip)
      resolve({ text, at, closedAt: Date.now() - t0 })
    })
  })
  return { socket, answer }
}

test('bodies a byte at a time: 408 once slow past the per-client cap, the rest after the grace; each connection closed', async () => {
  const extra = 4
  // One of them on the legacy surface, answered in its shape.
  const clients = Array.from({ length: MAX_SLOW_BODIES_PER_CLIENT + extra }, (_, i) => slowClient(i === 0 ? `/agents/${agentId}/publish` : '/api/v1/agents'))
  // Meanwhile an ordinary request is answered at once.
  expect((await s.api('GET', '/agents', { key })).status).toBe(200)
  const answers = await Promise.all(clients.map((c) => c.answer))
  for (const a of answers) {
    expect(a.text).toStartWith('HTTP/1.1 408')
    expect(a.text.toLowerCase()).toContain('connection: close')
    expect(a.closedAt - a.at).toBeLessThan(1_000)
  }
  expect(answers[0]!.text).toContain('"status":408')
  expect(answers[1]!.text).toContain('"error":"body: did not arrive in time')
  const early = answers.filter((a) => a.at < BODY_GRACE_MS)
  expect(early).toHaveLength(extra)
  for (const a of early) expect(a.at).toBeLessThan(SLOW_BODY_MS + 1_000)
  // The others: 5 s grace + 100,000 bytes at 32 KiB/s ≈ 8 s.
  for (const a of answers.filter((a) => a.at >= BODY_GRACE_MS)) expect(a.at).toBeLessThan(BODY_GRACE_MS + 4_000)
}, 20_000)

test('a slow body to a route that does not exist: answered 404 at once, the connection closed', async () => {
  const { text, at, closedAt } = await slowClient('/api/v1/no-such-thing').answer
  expect(text).toStartWith('HTTP/1.1 404')
  expect(at).toBeLessThan(1_000)
  expect(closedAt).toBeLessThan(1_000)
})
