/**
 * The real server on TELEPHONY_PROVIDER=telnyx, against the local fake of Telnyx's Call Control API
 * (test/fakes/telnyx.ts), on a free port its PUBLIC_BASE_URL names: Telnyx's signed webhooks and
 * the media-streaming socket come back to it there. Each e2e test of the Telnyx line starts one.
 */
import { startTelnyxFake, type TelnyxFake } from '../fakes/telnyx'
import { type CarrierServer, startCarrierServer } from './carrier-server'

export type TelnyxServer = CarrierServer<TelnyxFake>

/** `env`: more of the service's environment (engines, limits). */
export function startTelnyxServer(env: Record<string, string> = {}): Promise<TelnyxServer> {
  const fake = startTelnyxFake()
  return startCarrierServer(
    fake,
    {
      TELEPHONY_PROVIDER: 'telnyx',
      TELNYX_API_KEY: fake.apiKey,
      TELNYX_CONNECTION_ID: fake.connectionId,
      TELNYX_PUBLIC_KEY: fake.publicKey,
      TELNYX_API_BASE_URL: fake.url,
    },
    env,
  )
}
