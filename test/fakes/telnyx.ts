/**
 * A local fake of Telnyx's Call Control v2 API, its signed webhooks and its media-streaming
 * client, speaking Telnyx's formats as its docs give them
 * (https://developers.telnyx.com/api-reference/call-commands/dial, the call commands under
 * /v2/calls/{call_control_id}/actions/…, https://developers.telnyx.com/docs/messaging/webhooks
 * for the Ed25519 signing, and the AsyncAPI "Stream call media over WebSocket"):
 * - REST: JSON with `Authorization: Bearer <key>`; `POST /v2/calls` answers `{ data: { call_control_id,
 *   call_leg_id, call_session_id, is_alive, record_type: 'call' } }`; each command answers
 *   `{ data: { result: 'ok' } }`; `GET /v2/call_control_applications/{id}` answers the account's
 *   application (`record_type: 'call_control_application'`) or 404. Errors are `{ errors: [{ code, title, detail, source? }] }`: 401
 *   for a wrong key (10009), 422 for a refused value (10015) or a call already ended (90018), 429
 *   once `rateLimited` calls are asked in a row (10011), 404 for an unknown call (10005).
 * - Webhooks: `{ data: { record_type: 'event', event_type, id, occurred_at, payload }, meta }`
 *   POSTed to the call's `webhook_url`, signed with an Ed25519 key pair made here
 *   (`telnyx-signature-ed25519` over `${telnyx-timestamp}|${body}`); `publicKey` is its public half
 *   in base64, as the portal shows it. `addAccount()` makes another account (a number's own,
 *   `carrierCredentials`): its calls are placed with its key and its webhooks signed with its pair.
 * - Warm transfers: `gather_using_speak` and `speak` need `payload` and `voice` (422, 10015);
 *   `bridge` needs `call_control_id`, a live call of the same account (422 otherwise), and sends
 *   `call.bridged` to each leg; `press(…)` is the person's key, as `call.gather.ended` (`digits`,
 *   `status: valid`) for a leg with a gather under way. A command's `client_state` replaces the
 *   leg's on its later webhooks, as Telnyx's does.
 * - Media: `stream(…)` opens the `stream_url` a `streaming_start` named, as Telnyx does
 *   (`connected`, then `start` with `stream_id` and PCMU `media_format`), and collects what the
 *   service sends back.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, randomUUID, sign } from 'node:crypto'
import WebSocket from 'ws'

export interface TelnyxFakeCall {
  callControlId: string
  /** The API key of the account the call was placed (or answered) with. */
  apiKey: string
  /** The dial's JSON body. */
  dial: Record<string, unknown>
  /** Each command sent for the call: its name and body. */
  actions: { action: string; body: Record<string, unknown> }[]
  ended: boolean
  /** The call this one was bridged to (the `bridge` command's `call_control_id`, on either leg). */
  bridgedTo?: string
}

export interface TelnyxStream {
  socket: WebSocket
  received: any[]
  send(message: object): void
}

export interface TelnyxFake {
  url: string
  apiKey: string
  connectionId: string
  /** The webhooks' Ed25519 public key, base64 (TELNYX_PUBLIC_KEY). */
  publicKey: string
  calls: TelnyxFakeCall[]
  requests: { method: string; path: string; authorized: boolean }[]
  /** Numbers Telnyx will not dial (422, error 10015). */
  refuse: Set<string>
  /** The next this-many requests answer 429 (error 10011). */
  rateLimited: number
  /** Another account at this Telnyx: its key, Call Control application and public key. */
  addAccount(): { apiKey: string; connectionId: string; publicKey: string }
  /** A webhook to the call's webhook_url signed by the call's account (or `signedBy`'s, an API key); its `client_state` the call's (or `clientState`). Answers the status. */
  webhook(
    callControlId: string,
    eventType: string,
    payload?: Record<string, unknown>,
    opts?: { forged?: boolean; ageSeconds?: number; clientState?: string; url?: string; signedBy?: string; eventId?: string },
  ): Promise<number>
  /** The person pressed `digits` on the leg's gather (`call.gather.ended`); throws when no gather was asked for. */
  press(callControlId: string, digits: string): Promise<number>
  /** The call's media stream, opened as Telnyx opens it on `streaming_start` (or an `answer` with a stream_url). */
  stream(callControlId: string, o?: { echoMarks?: boolean }): Promise<TelnyxStream>
  stop(): Promise<void>
}

const rawPublicKey = (key: KeyObject) => Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url').toString('base64')

export function startTelnyxFake(): TelnyxFake {
  const apiKey = `KEY${randomBytes(16).toString('hex').toUpperCase()}`
  const connectionId = String(1_000_000_000 + Math.floor(Math.random() * 1e9))
  const pair = generateKeyPairSync('ed25519')
  const forger = generateKeyPairSync('ed25519')
  const accounts = [{ apiKey, connectionId, pair }]
  const accountOf = (key: string) => accounts.find((a) => a.apiKey === key) ?? accounts[0]!
  const calls: TelnyxFakeCall[] = []
  const requests: TelnyxFake['requests'] = []
  const refuse = new Set<string>()
  const error = (status: number, code: string, title: string, detail: string, pointer?: string) =>
    Response.json({ errors: [{ code, title, detail, ...(pointer ? { source: { pointer } } : {}) }] }, { status })
  const fake: TelnyxFake = {
    url: '',
    apiKey,
    connectionId,
    publicKey: rawPublicKey(pair.publicKey),
    calls,
    requests,
    refuse,
    rateLimited: 0,
    addAccount() {
      const account = { apiKey: `KEY${randomBytes(16).toString('hex').toUpperCase()}`, connectionId: String(2_000_000_000 + accounts.length), pair: generateKeyPairSync('ed25519') }
      accounts.push(account)
      return { apiKey: account.apiKey, connectionId: account.connectionId, publicKey: rawPublicKey(account.pair.publicKey) }
    },
    async webhook(callControlId, eventType, payload = {}, opts = {}) {
      const call = calls.find((c) => c.callControlId === callControlId)
      const target = opts.url ?? (call?.dial.webhook_url as string | undefined)
      if (!target) throw new Error(`no webhook_url for ${callControlId}`)
      const body = JSON.stringify({
        data: {
          record_type: 'event',
          event_type: eventType,
          id: opts.eventId ?? randomUUID(),
          occurred_at: new Date().toISOString(),
          payload: {
            call_control_id: callControlId,
            call_leg_id: randomUUID(),
            call_session_id: randomUUID(),
            connection_id: connectionId,
            from: call?.dial.from,
            to: call?.dial.to,
            direction: 'outgoing',
            client_state: opts.clientState ?? call?.dial.client_state,
            ...payload,
          },
        },
        meta: { attempt: 1, delivered_to: target },
      })
      const timestamp = String(Math.floor(Date.now() / 1000) - (opts.ageSeconds ?? 0))
      const signer = opts.forged ? forger : accountOf(opts.signedBy ?? call?.apiKey ?? apiKey).pair
      const signature = sign(null, Buffer.from(`${timestamp}|${body}`), signer.privateKey).toString('base64')
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': signature, 'telnyx-timestamp': timestamp }, body })
      return res.status
    },
    async press(callControlId, digits) {
      const call = calls.find((c) => c.callControlId === callControlId)
      if (!call?.actions.some((a) => a.action === 'gather_using_speak' || a.action === 'gather')) throw new Error(`no gather on ${callControlId}`)
      return fake.webhook(callControlId, 'call.gather.ended', { digits, status: 'valid' })
    },
    async stream(callControlId, o = {}) {
      const call = calls.find((c) => c.callControlId === callControlId)
      const params = call?.actions.find((a) => a.action === 'streaming_start' || a.action === 'answer')?.body
      const url = params?.stream_url
      if (typeof url !== 'string') throw new Error(`no stream_url was given for ${callControlId}`)
      const socket = new WebSocket(url)
      const received: any[] = []
      const streamId = randomUUID()
      const send = (m: object) => socket.send(JSON.stringify({ ...m, stream_id: streamId }))
      socket.on('message', (d) => {
        const m = JSON.parse(String(d))
        received.push(m)
        if (o.echoMarks && m.event === 'mark') send({ event: 'mark', sequence_number: '0', mark: m.mark })
      })
      await new Promise((resolve, reject) => {
        socket.once('open', resolve)
        socket.once('error', reject)
      })
      socket.send(JSON.stringify({ event: 'connected', version: '1.0.0' }))
      send({
        event: 'start',
        sequence_number: '1',
        start: {
          user_id: randomUUID(),
          call_control_id: callControlId,
          call_session_id: randomUUID(),
          from: call?.dial.from,
          to: call?.dial.to,
          client_state: call?.dial.client_state,
          media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 },
        },
      })
      return { socket, received, send }
    },
    async stop() {
      server.stop(true)
    },
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const account = accounts.find((a) => req.headers.get('authorization') === `Bearer ${a.apiKey}`)
      const authorized = !!account
      requests.push({ method: req.method, path, authorized })
      if (!authorized) return error(401, '10009', 'Authentication failed', 'The API key provided is not valid.')
      if (fake.rateLimited > 0) {
        fake.rateLimited--
        return error(429, '10011', 'Too many requests', 'You have exceeded the rate limit for this resource.')
      }
      const application = /^\/v2\/call_control_applications\/([^/]+)$/.exec(path)
      if (req.method === 'GET' && application) {
        const id = decodeURIComponent(application[1]!)
        if (id !== account!.connectionId) return error(404, '10005', 'Resource not found', `Call control application ${id} was not found.`)
        return Response.json({
          data: { id, record_type: 'call_control_application', application_name: 'agents', active: true, webhook_event_url: 'https://example.com/telephony/telnyx/events', webhook_api_version: '2' },
        })
      }
      if (!req.headers.get('content-type')?.startsWith('application/json')) return error(400, '10015', 'Bad Request', 'Content-Type must be application/json')
      const body = (await req.json().catch(() => null)) as Record<string, unknown> | null
      if (!body) return error(400, '10015', 'Bad Request', 'The request body is not valid JSON.')
      if (req.method === 'POST' && path === '/v2/calls') {
        if (body.connection_id !== account!.connectionId)
          return error(422, '10015', 'Invalid value for connection_id', 'The connection_id is not a Call Control application of this account.', '/connection_id')
        for (const required of ['to', 'from']) if (typeof body[required] !== 'string') return error(422, '10015', `Invalid value for ${required}`, `${required} is required.`, `/${required}`)
        if (refuse.has(body.to as string)) return error(422, '10015', 'Invalid value for to', `The destination number ${body.to} is not a valid phone number.`, '/to')
        const callControlId = `v3:${randomBytes(24).toString('base64url')}`
        calls.push({ callControlId, apiKey: account!.apiKey, dial: body, actions: [], ended: false })
        return Response.json({ data: { call_control_id: callControlId, call_leg_id: randomUUID(), call_session_id: randomUUID(), is_alive: false, record_type: 'call' } })
      }
      const command = /^\/v2\/calls\/([^/]+)\/actions\/([a-z_]+)$/.exec(path)
      if (req.method === 'POST' && command) {
        const callControlId = decodeURIComponent(command[1]!)
        let call = calls.find((c) => c.callControlId === callControlId)
        // An incoming call is known to Telnyx before we command it.
        if (!call && (command[2] === 'answer' || command[2] === 'reject')) {
          call = { callControlId, apiKey: account!.apiKey, dial: {}, actions: [], ended: false }
          calls.push(call)
        }
        // A call is commanded with the key of the account it belongs to: another account does not see it.
        if (!call || call.apiKey !== account!.apiKey) return error(404, '10005', 'Resource not found', `Call ${callControlId} was not found.`)
        if (call.ended) return error(422, '90018', 'Call has already ended', 'This call is no longer active and can not receive commands.')
        const action = command[2]!
        if ((action === 'gather_using_speak' || action === 'speak') && (typeof body.payload !== 'string' || typeof body.voice !== 'string'))
          return error(422, '10015', 'Invalid parameters', 'payload and voice are required.', typeof body.payload !== 'string' ? '/payload' : '/voice')
        const other = action === 'bridge' ? calls.find((c) => c.callControlId === body.call_control_id) : undefined
        if (action === 'bridge' && (!other || other.ended || other.apiKey !== call.apiKey))
          return error(422, '90018', 'Call has already ended', 'The call to bridge with is not active.', '/call_control_id')
        call.actions.push({ action, body })
        if (action === 'hangup' || action === 'reject') call.ended = true
        if (action === 'answer' && typeof body.webhook_url === 'string') call.dial.webhook_url = body.webhook_url
        if (typeof body.client_state === 'string') call.dial.client_state = body.client_state
        if (other) {
          call.bridgedTo = other.callControlId
          other.bridgedTo = call.callControlId
          // Telnyx reports the bridge on both legs once it is made, after the command's answer.
          setTimeout(() => {
            for (const leg of [call, other]) void fake.webhook(leg.callControlId, 'call.bridged').catch(() => {})
          }, 0)
        }
        return Response.json({ data: { result: 'ok' } })
      }
      return error(404, '10005', 'Resource not found', `${path} was not found.`)
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}
