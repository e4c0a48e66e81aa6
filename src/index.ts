/** Boot: read config (a bad value stops here, naming it), start, and say how to use it. */
import { InspectorPortTaken } from '../actors/inspection'
import { type Config, ConfigError, loadConfig } from './config'
import { PortTaken } from './listen-port'
import { createLogger } from './logger'
import { type RunningServer, startServer } from './server'

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`configuration error: ${error.message}`)
    process.exit(2)
  }
  throw error
}

// Files the service creates (the store, coordination, secrets) are for this user only.
process.umask(0o077)
const logger = createLogger(config.logLevel)
let server: RunningServer
try {
  server = await startServer(config, logger)
} catch (error) {
  if (error instanceof PortTaken) {
    console.error(`configuration error: PORT: ${error.message}`)
    process.exit(2)
  }
  if (error instanceof InspectorPortTaken) {
    console.error(`configuration error: INSPECT_PORT: ${error.message}; choose a free one`)
    process.exit(2)
  }
  throw error
}
const lines = [
  `agent platform listening on ${server.url} (store: ${server.services.store.kind}, coordination: ${server.services.coordination.kind}, clock: ${server.services.clock.kind})`,
  // Printed once, when made: a token set by the operator or kept in DATA_DIR stays out of logs.
  server.consoleTokenSource === 'generated'
    ? `console token (made now, kept in ${config.dataDir}/console-token): ${server.consoleToken}`
    : `console token: ${server.consoleTokenSource === 'env' ? 'from CONSOLE_TOKEN' : `in ${config.dataDir}/console-token`}`,
  `API docs: ${server.docs.v1} (v1), ${server.docs.legacy} (legacy), ${server.docs.console} (console)`,
]
const inspection = server.services.inspection
if (inspection) {
  const charts = `${server.url}/console/app#/charts`
  inspection.setConsoleChartsUrl(charts)
  lines.push(
    inspection.viewerUrl
      ? `actor inspector: ${inspection.viewerUrl} (the relay listens on every interface, port ${config.inspectPort}); its page embeds https://stately.ai/inspect and needs the internet: offline, use the console app's state charts at ${charts}`
      : `actor inspector: events streamed to the relay at ${config.inspectUrl}; offline, the console app's state charts are at ${charts}`,
  )
}
if (server.demo) lines.push(`demo workspace ${server.demo.id} created; its full API key (shown once): ${server.demo.key}`)
console.log(lines.join('\n'))

/**
 * Ctrl-C under `npm start` arrives twice: the terminal sends SIGINT to the whole foreground group
 * and npm forwards its own copy to the service: 9–13 ms later here idle, 47 ms with tests running
 * beside it. A second press by a person is a separate, later keystroke; so a repeat of the same
 * signal within half a second is that one press, not a request to cut the drain short.
 */
const SAME_SIGNAL_MS = 500

// The first signal drains (docs/production.md "Draining") and exits 0 once the store is closed;
// a second one ends the live calls at once (still with their goodbye) instead of at the deadline.
let draining = false
let first: { signal: string; at: number } | null = null
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (first && first.signal === signal && Date.now() - first.at < SAME_SIGNAL_MS) return
    if (draining) {
      logger.info({ signal }, 'second signal: ending live calls now')
      return void server.drain()
    }
    draining = true
    first = { signal, at: Date.now() }
    logger.info({ signal, drainSeconds: config.drainSeconds }, 'shutting down: draining')
    const since = Date.now()
    server.drain().then(
      () => {
        logger.info({ ms: Date.now() - since }, 'drained and stopped')
        process.exit(0)
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  })
}
