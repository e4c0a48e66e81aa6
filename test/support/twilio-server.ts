/**
 * The real server on TELEPHONY_PROVIDER=twilio, against the local fake of Twilio's REST API
 * (test/fakes/twilio.ts), on a free port its PUBLIC_BASE_URL names: Twilio's signed callbacks and
 * the Media Streams socket come back to it there. Each e2e test of the Twilio line starts one.
 */
import { expect } from 'bun:test'
import WebSocket from 'ws'
import { twilioSignature } from '../../src/providers/telephony/twilio-signature'
import { startTwilioFake, streamOpening, type TwilioFake } from '../fakes/twilio'
import { type CarrierServer, startCarrierServer } from './carrier-server'
import { until } from './until'

export type TwilioServer = CarrierServer<TwilioFake>

/** `env`: more of the service's environment (engines, limits). */
export function startTwilioServer(env: Record<string, string> = {}): Promise<TwilioServer> {
  const fake = startTwilioFake()
  return startCarrierServer(
    fake,
    {
      TELEPHONY_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: fake.accountSid,
      TWILIO_AUTH_TOKEN: fake.authToken,
      TWILIO_API_BASE_URL: fake.url,
    },
    env,
  )
}

/** Where the TwiML of the call placed as `sid` streams its audio: the socket's URL and the token it carries. */
export function streamOf(fake: TwilioFake, sid: string): { wsUrl: string; token: string } {
  const twiml = fake.calls.find((c) => c.sid === sid)!.form.get('Twiml')!
  return { wsUrl: /<Stream url="([^"]+)"/.exec(twiml)![1]!, token: /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]! }
}

/**
 * The Media Streams socket of the call placed as `sid`, opened as Twilio opens it (the signed
 * upgrade, then `connected` and `start` as `streamSid`); `received` collects what the service
 * sends. `echoMarks`: each mark comes back at once, as Twilio echoes it once the audio before it
 * has played, so the agent's words count as heard.
 */
export async function openStream(fake: TwilioFake, sid: string, streamSid: string, o: { echoMarks: boolean }): Promise<{ socket: WebSocket; received: any[] }> {
  const { wsUrl, token } = streamOf(fake, sid)
  const socket = new WebSocket(wsUrl, { headers: { 'x-twilio-signature': twilioSignature(fake.authToken, wsUrl, {}) } })
  const received: any[] = []
  socket.on('message', (d) => {
    const m = JSON.parse(String(d))
    received.push(m)
    if (o.echoMarks && m.event === 'mark') socket.send(JSON.stringify({ event: 'mark', streamSid, sequenceNumber: '0', mark: m.mark }))
  })
  await new Promise((resolve) => socket.once('open', resolve))
  for (const m of streamOpening({ streamSid, accountSid: fake.accountSid, callSid: sid, token })) socket.send(m)
  return { socket, received }
}

/** An outbound call of a new workspace's agent (on `agentNumber`) to `contact`, placed with `purpose` and answered by a person. */
export interface AnsweredCall {
  id: string
  key: string
  /** What a Media Streams client of the call needs. */
  stream: { wsUrl: string; token: string; authToken: string; accountSid: string; callSid: string }
}

/** Places a call through the API on `t`'s service, has Twilio report a person answered, and waits until it is connected. */
export async function answeredCall(t: TwilioServer, o: { name: string; agentNumber: string; contact: string; purpose: string }): Promise<AnsweredCall> {
  const { s, fake } = t
  const dev = await s.developer({ plan: 'scale', name: o.name })
  const agent = (await s.agent(dev.key, { name: 'Deliveries', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: o.agentNumber, source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: o.contact })).status).toBe(201)
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: o.contact, purpose: o.purpose } })
  expect(placed.status).toBe(202)
  const id = placed.body.id as string
  const sent = fake.calls.at(-1)!
  const { wsUrl, token } = streamOf(fake, sent.sid)
  expect(await fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
  await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  return { id, key: dev.key, stream: { wsUrl, token, authToken: fake.authToken, accountSid: fake.accountSid, callSid: sent.sid } }
}
