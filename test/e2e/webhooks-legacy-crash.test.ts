/**
 * A SIGKILL between recording a legacy webhook's event and delivering it: the restarted service
 * delivers it once (the legacy surface's other routes and deliveries: webhooks-legacy.test.ts).
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { legacyCall } from '../features/webhooks/legacy-call'
import { startReceiver, WAIT_MS } from '../features/webhooks/receiver'
import { responseChecker } from '../support/response-check'
import { startTestServer } from '../support/server'
import { until } from '../support/until'

describe('crash between recording an event and delivering it', () => {
  const BUN = existsSync(resolve(import.meta.dir, '../../node_modules/.bin/bun')) ? resolve(import.meta.dir, '../../node_modules/.bin/bun') : process.execPath
  const CHILD = resolve(import.meta.dir, '../features/webhooks/crash-child.ts')
  // Starting the child service takes about a second; 15 s bounds a stuck one under the test timeout.
  const CHILD_TIMEOUT_MS = 15_000

  test('SIGKILL right after the event is recorded: the delivery happens after restart, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhooks-crash-'))
    const receiver = startReceiver()
    try {
      const first = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }, dir)
      const d = await first.developer()
      const a = (await first.api('POST', '/agents', { key: d.key, body: { name: 'Ava' } })).body.id
      const check = responseChecker(first.server.app.routes as any)
      const ep = await legacyCall(check, 'POST', '/webhooks/endpoints', { url: `${receiver.url}/crash`, event_types: ['voice.call.ended'] }, d.key, first.url)
      expect(ep.status).toBe(200)
      await first.stop()

      const child = Bun.spawn([BUN, CHILD, dir, d.id, a], { stdout: 'pipe', stderr: 'pipe' })
      let out = ''
      const deadline = Date.now() + CHILD_TIMEOUT_MS
      const reader = (child.stdout as ReadableStream<Uint8Array>).getReader()
      while (!/RECORDED (\S+)/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`child did not record: ${out} ${await new Response(child.stderr as ReadableStream).text()}`)
        const { value, done } = await reader.read()
        if (done) break
        out += new TextDecoder().decode(value)
      }
      const eventId = /RECORDED (\S+)/.exec(out)![1]
      child.kill('SIGKILL')
      await child.exited
      expect(receiver.received).toHaveLength(0)

      const second = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }, dir)
      try {
        const [got] = await receiver.waitFor(1)
        expect(got.headers.get('x-service-event-id')).toBe(eventId)
        expect(got.json).toMatchObject({ id: eventId, event_type: 'voice.call.ended', data: { callId: 'out_crash' } })
        const list = await until(
          'the recovered delivery to be recorded',
          async () => {
            const r = await legacyCall(check, 'GET', `/webhooks/endpoints/${ep.body.endpoint.id}/deliveries`, undefined, d.key, second.url)
            return r.body.deliveries[0]?.status === 'success' ? r.body.deliveries : undefined
          },
          WAIT_MS,
        )
        expect(list).toHaveLength(1)
        const stored = await second.server.services.bus.events.get(eventId)
        expect(stored?.dispatched).toBe(true)
        await Bun.sleep(100)
        expect(receiver.received).toHaveLength(1)
      } finally {
        await second.stop()
      }
    } finally {
      await receiver.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 40_000)
})
