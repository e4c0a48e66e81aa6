/**
 * A body whose deadline outlasts the server's idle timeout (HTTP_IDLE_SECONDS) still gets its 408,
 * over raw TCP: Bun does not restart its idle timer while a body arrives, so such a body used to be
 * cut at the idle timeout with no answer and no log line. The idle timeout is 4 s here so the test
 * takes seconds; by default it is 30 s, which a 1 MB body (35.5 s) outlasted the same way.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { BODY_GRACE_MS, BODY_MIN_BYTES_PER_S } from '../../src/http/body-deadline'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'

const IDLE_SECONDS = 4
/** Its deadline: 5 s grace + 100,000 bytes at 32 KiB/s ≈ 8 s, twice the idle timeout. */
const DECLARED = 100_000
const DEADLINE_MS = BODY_GRACE_MS + (DECLARED / BODY_MIN_BYTES_PER_S) * 1000

let s: TestServer
let port: number
let key: string
const { logger, lines } = capturedLogger('warn')

beforeAll(async () => {
  s = await startTestServer({ HTTP_IDLE_SECONDS: String(IDLE_SECONDS) }, undefined, logger)
  port = Number(new URL(s.url).port)
  key = (await s.developer()).key
})
afterAll(() => s?.stop())

/** Declares DECLARED bytes and sends 256 every 250 ms (1 KiB/s) until the server answers or closes. */
function slowClient(): Promise<{ text: string; closedAt: number }> {
  const socket = connect(port, '127.0.0.1')
  const t0 = Date.now()
  let text = ''
  socket.write(`POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${DECLARED}\r\n\r\n{`)
  const drip = setInterval(() => !socket.destroyed && socket.write(Buffer.alloc(256, 32)), 250)
  return new Promise((resolve) => {
    socket.on('data', (d) => {
      text += d.toString()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(drip)
      resolve({ text, closedAt: Date.now() - t0 })
    })
  })
}

test('bodies slower than the idle timeout but within their deadline: each gets its 408 and a log line', async () => {
  const answers = await Promise.all([slowClient(), slowClient(), slowClient()])
  for (const a of answers) {
    expect(a.text).toStartWith('HTTP/1.1 408')
    expect(a.text).toContain('"error":"body: did not arrive in time')
    // Not cut at the idle timeout: answered at the body's deadline.
    expect(a.closedAt).toBeGreaterThanOrEqual(DEADLINE_MS - 500)
  }
  expect(lines.filter((l) => l.msg === 'request body too slow: answered 408')).toHaveLength(3)
  // The connection's own idle timeout is back for ordinary requests.
  expect((await s.api('GET', '/agents', { key })).status).toBe(200)
}, 30_000)
