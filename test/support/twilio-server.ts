/**
 * The real server on TELEPHONY_PROVIDER=twilio, against the local fake of Twilio's REST API
 * (test/fakes/twilio.ts), on a free port its PUBLIC_BASE_URL names: Twilio's signed callbacks and
 * the Media Streams socket come back to it there. Each e2e test of the Twilio line starts one.
 */
import { startTwilioFake, type TwilioFake } from '../fakes/twilio'
import { freePort } from './child-service'
import { startTestServer, type TestServer } from './server'

export interface TwilioServer {
  fake: TwilioFake
  s: TestServer
  stop(): Promise<void>
}

/** `env`: more of the service's environment (engines, limits). */
export async function startTwilioServer(env: Record<string, string> = {}): Promise<TwilioServer> {
  const fake = startTwilioFake()
  const port = await freePort()
  const s = await startTestServer({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: fake.accountSid,
    TWILIO_AUTH_TOKEN: fake.authToken,
    TWILIO_API_BASE_URL: fake.url,
    ...env,
  })
  return {
    fake,
    s,
    stop: async () => {
      await s.stop()
      await fake.stop()
    },
  }
}

/** Where the TwiML of the call placed as `sid` streams its audio: the socket's URL and the token it carries. */
export function streamOf(fake: TwilioFake, sid: string): { wsUrl: string; token: string } {
  const twiml = fake.calls.find((c) => c.sid === sid)!.form.get('Twiml')!
  return { wsUrl: /<Stream url="([^"]+)"/.exec(twiml)![1]!, token: /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]! }
}
