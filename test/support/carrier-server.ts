/**
 * The real server on a carrier's line, against that carrier's local fake, on a free port its
 * PUBLIC_BASE_URL names: the carrier's signed callbacks and its media socket come back to it
 * there. twilio-server.ts and telnyx-server.ts start one with their carrier's variables.
 */
import { freePort } from './child-service'
import { startTestServer, type TestServer } from './server'

export interface CarrierServer<F> {
  fake: F
  s: TestServer
  stop(): Promise<void>
}

/** `carrier`: the variables that point the service at `fake`; `env`: more of its environment (engines, limits). */
export async function startCarrierServer<F extends { stop(): unknown }>(fake: F, carrier: Record<string, string>, env: Record<string, string>): Promise<CarrierServer<F>> {
  const port = await freePort()
  const s = await startTestServer({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...carrier, ...env })
  return {
    fake,
    s,
    stop: async () => {
      await s.stop()
      await fake.stop()
    },
  }
}
