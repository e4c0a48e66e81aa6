/**
 * A local fake of Twilio's Voice REST API and of its status callbacks, speaking Twilio's formats:
 * `POST /2010-04-01/Accounts/{AccountSid}/Calls.json` (form-encoded, HTTP Basic auth with the
 * account SID and auth token) answers 201 with a call resource (`sid` CA…, `status` queued) or
 * Twilio's error body `{ code, message, more_info, status }`; `POST …/Calls/{CallSid}.json` with
 * `Status=completed|canceled` ends a call, and with `Twiml=` gives a live call new TwiML (a transfer's
 * `<Dial>`; kept in `twimls`). `callback()` sends a status callback to the call's
 * StatusCallback as Twilio does: form-encoded POST signed with X-Twilio-Signature (HMAC-SHA1 of the
 * URL and the sorted parameters, base64), written here from Twilio's documentation.
 */
import { createHmac, randomBytes } from 'node:crypto'

export interface FakeCall {
  sid: string
  form: URLSearchParams
  /** Each Status sent to update the call. */
  updates: string[]
  /** Each TwiML sent to update the live call. */
  twimls: string[]
}

export interface TwilioFake {
  url: string
  accountSid: string
  authToken: string
  calls: FakeCall[]
  /** Numbers whose placement Twilio refuses (error 21211 style). */
  refuse: Set<string>
  requests: { method: string; path: string; authorized: boolean }[]
  /** Call sids whose TwiML update Twilio refuses (error 21220: the call is not in progress). */
  refuseUpdates: Set<string>
  callback(sid: string, params: Record<string, string>, opts?: { badSignature?: boolean }): Promise<number>
  /** A signed form POST to any URL our TwiML named (a `<Dial action>`, a `<Number statusCallback>`), as Twilio sends it. */
  post(url: string, params: Record<string, string>): Promise<Response>
  /** The asynchronous answering-machine verdict, to the call's AsyncAmdStatusCallback (AnsweredBy, MachineDetectionDuration). */
  amd(sid: string, params: Record<string, string>, opts?: { badSignature?: boolean }): Promise<number>
  stop(): Promise<void>
}

const sign = (token: string, url: string, params: Record<string, string>) =>
  createHmac('sha1', token)
    .update(
      url +
        Object.keys(params)
          .sort()
          .map((k) => k + params[k])
          .join(''),
    )
    .digest('base64')

/**
 * The two messages Twilio sends when a Media Streams socket opens (`connected`, then `start`), as
 * its docs show them: 8 kHz μ-law, the inbound track, the TwiML's <Parameter>s as customParameters.
 */
export function streamOpening(o: { streamSid: string; accountSid: string; callSid: string; token: string }): string[] {
  return [
    JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
    JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid: o.streamSid,
      start: {
        streamSid: o.streamSid,
        accountSid: o.accountSid,
        callSid: o.callSid,
        tracks: ['inbound'],
        customParameters: { token: o.token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    }),
  ]
}

export function startTwilioFake(): TwilioFake {
  const accountSid = `AC${randomBytes(16).toString('hex')}`
  const authToken = randomBytes(16).toString('hex')
  const calls: FakeCall[] = []
  const refuse = new Set<string>()
  const refuseUpdates = new Set<string>()
  const requests: TwilioFake['requests'] = []
  const error = (status: number, code: number, message: string) => Response.json({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }, { status })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const authorized = req.headers.get('authorization') === `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`
      requests.push({ method: req.method, path, authorized })
      if (!authorized) return error(401, 20003, 'Authenticate')
      if (req.headers.get('content-type') !== 'application/x-www-form-urlencoded') return error(400, 20001, 'Content-Type must be application/x-www-form-urlencoded')
      const form = new URLSearchParams(await req.text())
      const base = `/2010-04-01/Accounts/${accountSid}/Calls`
      if (req.method === 'POST' && path === `${base}.json`) {
        for (const required of ['To', 'From']) if (!form.get(required)) return error(400, 21201, `No '${required}' number is specified`)
        if (!form.get('Url') && !form.get('Twiml') && !form.get('ApplicationSid')) return error(400, 21205, 'Url parameter is required.')
        if (refuse.has(form.get('To')!)) return error(400, 21211, `The 'To' number ${form.get('To')} is not a valid phone number.`)
        const sid = `CA${randomBytes(16).toString('hex')}`
        calls.push({ sid, form, updates: [], twimls: [] })
        return Response.json({ sid, account_sid: accountSid, to: form.get('To'), from: form.get('From'), status: 'queued', direction: 'outbound-api' }, { status: 201 })
      }
      const update = new RegExp(`^${base}/(CA[0-9a-f]{32})\\.json$`).exec(path)
      if (req.method === 'POST' && update) {
        const call = calls.find((c) => c.sid === update[1])
        if (!call) return error(404, 20404, `The requested resource ${path} was not found`)
        const twiml = form.get('Twiml')
        if (twiml !== null) {
          if (refuseUpdates.has(call.sid)) return error(400, 21220, 'Call is not in-progress. Cannot redirect.')
          call.twimls.push(twiml)
          return Response.json({ sid: call.sid, status: 'in-progress' })
        }
        const status = form.get('Status')
        if (status !== 'completed' && status !== 'canceled') return error(400, 21220, 'Invalid call state for this operation')
        call.updates.push(status)
        return Response.json({ sid: call.sid, status })
      }
      return error(404, 20404, `The requested resource ${path} was not found`)
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    accountSid,
    authToken,
    calls,
    refuse,
    refuseUpdates,
    requests,
    post(url, params) {
      const body = { AccountSid: accountSid, ApiVersion: '2010-04-01', ...params }
      return fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sign(authToken, url, body) }, body: new URLSearchParams(body) })
    },
    callback(sid, params, opts = {}) {
      return post(sid, 'StatusCallback', params, opts)
    },
    amd(sid, params, opts = {}) {
      return post(sid, 'AsyncAmdStatusCallback', params, opts)
    },
    async stop() {
      server.stop(true)
    },
  }

  async function post(sid: string, to: 'StatusCallback' | 'AsyncAmdStatusCallback', params: Record<string, string>, opts: { badSignature?: boolean }) {
    const call = calls.find((c) => c.sid === sid)
    if (!call) throw new Error(`no call ${sid}`)
    const target = call.form.get(to)
    if (!target) throw new Error(`call ${sid} was placed without ${to}`)
    const body = { CallSid: sid, AccountSid: accountSid, From: call.form.get('From')!, To: call.form.get('To')!, Direction: 'outbound-api', ApiVersion: '2010-04-01', ...params }
    const signature = opts.badSignature ? sign('not-the-token', target, body) : sign(authToken, target, body)
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, body: new URLSearchParams(body) })
    return res.status
  }
}
