/** Starts the whole service: config → services → app → listen. Used by index.ts and tests. */

import { type App, createApp, DOCS } from './app'
import { ensureDemoWorkspace, persistentSecret } from './boot'
import type { Config } from './config'
import { assertPortFree, isAddressInUse, PortTaken } from './listen-port'
import { createLogger, type Logger } from './logger'
import { buildServices, type Services } from './services'

/**
 * No ceiling at the transport: Bun's own (default 128 MiB) answers a bare 413 with no body and no
 * request id. The kernel (http/json-body.ts) refuses a body over its surface's limit itself
 * (http/body-limits.ts: 2 MiB for the API, less for the visitor API and vendors' callbacks), in the
 * surface's shape — by Content-Length before reading, or once a chunked body runs past it — and
 * Bun hands the request over before buffering it: a 300 MiB upload was answered 413 after ~3 MiB
 * had arrived, the server at 45 MiB RSS.
 */
const TRANSPORT_MAX_BODY_BYTES = Number.MAX_SAFE_INTEGER

export interface RunningServer {
  url: string
  port: number
  consoleToken: string
  /** Where the console token came from; it is printed only when it was made at this start. */
  consoleTokenSource: 'env' | 'file' | 'generated'
  services: Services
  app: App
  demo: { id: string; key: string } | null
  docs: { v1: string; legacy: string; console: string }
  /**
   * Graceful shutdown (SIGTERM): drains (health 503, new work refused, live calls go on until
   * DRAIN_SECONDS, then end with a goodbye), then stops. Called again while draining, it ends the
   * live calls now and resolves at once.
   */
  drain(): Promise<void>
  stop(): Promise<void>
}

export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  // 32 random characters ≈ 160 bits, like our API keys.
  // Minimums are config.ts's for the same variables (CONSOLE_TOKEN 24, SECRET_KEY 32).
  const consoleSecret = persistentSecret(config.dataDir, 'console-token', config.consoleToken, 32, 24)
  const consoleToken = consoleSecret.value
  const secretKey = persistentSecret(config.dataDir, 'secret-key', config.secretKey, 48, 32).value
  if (!config.reusePort) assertPortFree(config.host, config.port)
  const services = await buildServices({ ...config, consoleToken, secretKey }, logger)
  const demo = await ensureDemoWorkspace(services)
  let app: App
  try {
    app = createApp(services, consoleToken).listen({
      port: config.port,
      hostname: config.host,
      reusePort: config.reusePort,
      maxRequestBodySize: TRANSPORT_MAX_BODY_BYTES,
      idleTimeout: config.httpIdleSeconds,
    })
  } catch (error) {
    await services.close()
    throw isAddressInUse(error) ? new PortTaken(config.host, config.port) : error
  }
  const port = app.server!.port!
  services.listening.server = app.server
  // The process's own address, for clients it runs itself (the sandbox network's callees).
  services.listening.url = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`
  const base = config.port === 0 ? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}` : config.publicBaseUrl
  const running: RunningServer = {
    url: base,
    port,
    consoleToken,
    consoleTokenSource: consoleSecret.source,
    services,
    app,
    demo,
    docs: { v1: `${base}${DOCS.v1}`, legacy: `${base}${DOCS.legacy}`, console: `${base}${DOCS.console}` },
    async drain() {
      if (services.draining.active) return services.draining.cutShort()
      await services.drain()
      await running.stop()
    },
    async stop() {
      await app.stop(true)
      await services.close()
    },
  }
  return running
}
