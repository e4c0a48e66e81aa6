/**
 * The baseline for bench/api.ts: a bare `Bun.serve` that answers every request with the bytes
 * and content type our service gave for GET /api/v1/agents/{id}. It runs in its own process,
 * like the service, so both sides pay the same process and loopback costs.
 *
 * Env: PORT, HOST (127.0.0.1), BODY_FILE (the exact response bytes), CONTENT_TYPE.
 */
import { readFileSync } from 'node:fs'

const port = Number(process.env.PORT)
const hostname = process.env.HOST ?? '127.0.0.1'
const bodyFile = process.env.BODY_FILE
const contentType = process.env.CONTENT_TYPE
if (!Number.isInteger(port) || port <= 0 || !bodyFile || !contentType) {
  console.error('bare-server: PORT, BODY_FILE and CONTENT_TYPE are required')
  process.exit(2)
}

const body = readFileSync(bodyFile)

// A new Response per request, as a real handler would build one; no static-route shortcut,
// which would measure Bun's cache rather than a request handler.
const server = Bun.serve({
  port,
  hostname,
  fetch: () => new Response(body, { headers: { 'content-type': contentType } }),
})

console.log(`bare server on http://${hostname}:${server.port}`)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.stop(true)
    process.exit(0)
  })
}
