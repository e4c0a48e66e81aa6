/**
 * The inspector relay (actors/inspection-relay.ts) speaks @statelyai/inspect's relay protocol:
 * what one socket sends reaches every other socket, and a newcomer is first replayed what was sent.
 */
import { afterEach, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { type Relay, relayPage, startRelay } from '../../actors/inspection-relay'
import { freePort } from '../support/child-service'
import { until } from '../support/until'

let relay: Relay | null = null
const sockets: WebSocket[] = []
afterEach(() => {
  for (const s of sockets.splice(0)) s.close()
  relay?.stop()
  relay = null
})

async function connect(port: number): Promise<{ ws: WebSocket; got: string[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`)
  sockets.push(ws)
  const got: string[] = []
  ws.on('message', (m) => got.push(m.toString()))
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  return { ws, got }
}

test('a message from the service reaches the page; a page that opens later is replayed it', async () => {
  const port = await freePort()
  relay = startRelay(port)
  const service = await until('the relay to listen', () => connect(port).catch(() => undefined))
  const page = await connect(port)
  service.ws.send(JSON.stringify({ type: '@xstate.event', n: 1 }))
  await until('the page to get the event', () => page.got.length === 1)
  expect(JSON.parse(page.got[0]!)).toEqual({ type: '@xstate.event', n: 1 })
  expect(service.got).toEqual([])
  const late = await connect(port)
  await until('the replay', () => late.got.length === 1)
})

test('the page says it needs the internet and links the console charts once known', () => {
  const before = relayPage(9231, null)
  expect(before).toContain('needs the internet')
  expect(before).toContain('/console/app#/charts')
  const after = relayPage(9231, 'http://127.0.0.1:3000/console/app#/charts')
  expect(after).toContain('<a href="http://127.0.0.1:3000/console/app#/charts">')
  expect(relayPage(9231, 'http://x/"><script>')).not.toContain('"><script>')
})
