/**
 * The process the legacy crash test kills: starts the real service on <dataDir> (manual clock,
 * private targets allowed, as the test server runs), records one event WITHOUT dispatching it —
 * exactly what a crash between the insert and the dispatch leaves — prints RECORDED <eventId> and
 * waits to be killed with SIGKILL.
 *   bun test/features/webhooks/crash-child.ts <dataDir> <workspaceId> <agentId>
 */
import { loadConfig } from '../../../src/config'
import { createLogger } from '../../../src/logger'
import { startServer } from '../../../src/server'

const [dataDir, workspaceId, agentId] = process.argv.slice(2)
if (!dataDir || !workspaceId || !agentId) throw new Error('usage: crash-child.ts <dataDir> <workspaceId> <agentId>')

const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
const server = await startServer(config, createLogger('silent'))
const event = await server.services.bus.record({
  type: 'voice.call.ended',
  workspaceId,
  agentId,
  data: { callId: 'out_crash', status: 'completed', hangup: 'answered', seconds: 42, phone: null, endedAt: '2026-01-01T00:00:00.000Z' },
})
console.log(`RECORDED ${event.id}`)
// Keeps the process alive until the test kills it.
setInterval(() => {}, 60_000)
