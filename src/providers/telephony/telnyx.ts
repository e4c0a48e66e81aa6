/**
 * The Telnyx adapter of the telephony port, on Call Control v2
 * (https://developers.telnyx.com/api-reference/call-commands/dial and the other call commands;
 * team-telnyx/telnyx-node `calls.dial`, `calls.actions.*`): JSON over HTTPS with
 * `Authorization: Bearer <API key>`; errors come as `{ errors: [{ code, title, detail }] }`.
 *
 * - Placing: `POST /v2/calls` with the Call Control application (`connection_id`), `to`, `from`,
 *   our `webhook_url`, `client_state` naming the try (telnyx-events.ts) and
 *   `answering_machine_detection` (`detect`; `detect_beep` for a voicemail drop, whose
 *   `call.machine.greeting.ended` says the greeting is over).
 * - Media: `POST /v2/calls/{call_control_id}/actions/streaming_start` with `stream_url` (the media
 *   bridge, its token in the path), `stream_track: inbound_track`, `stream_codec` and
 *   `stream_bidirectional_codec` PCMU, `stream_bidirectional_mode: rtp`. It is sent once the answer
 *   has reached the call chart (and, when machines end the try, once the verdict is a person):
 *   asked for on the dial, the socket could open before the call is connected here and be refused.
 * - Hang-up (`actions/hangup`), cold transfer (`actions/transfer`, the person's leg tagged by
 *   `target_leg_client_state` so its answer and hang-up reach the chart). A warm transfer dials
 *   the person on a second call (`POST /v2/calls`, `link_to` the caller's call), briefs them and
 *   gathers their key (telnyx-warm.ts), and joins the two with `actions/bridge`, then stops our
 *   stream (`actions/streaming_stop`).
 * - Webhooks: signed with Ed25519 (telnyx-signature.ts), mapped to the port's events, each event
 *   id claimed in the coordination store so a resend is taken once across instances.
 * - A number with its own Telnyx account (`carrierCredentials`, `accountOf`: `apiKey`,
 *   `connectionId`, `publicKey`) has its calls placed and commanded with that account's key, and
 *   their webhooks verified with that account's public key; the others use the instance's.
 *
 * The REST base URL is configurable (TELNYX_API_BASE_URL) so tests use a local fake.
 */
import { type KeyObject, randomUUID } from 'node:crypto'
import type { Coordination } from '../../coordination/port'
import {
  AccountRefused,
  type CarrierAccount,
  type CarrierAccountOf,
  type JoinRequest,
  type Placed,
  PlacementRefused,
  type PlaceRequest,
  type Telephony,
  type TelephonyEvent,
  type TransferRequest,
  type WarmTransferRequest,
} from './port'
import { decodeLegState, encodeLegState, hangupSeconds, type LegState, machineVerdict, parseWebhook, type TelnyxWebhook, transferOutcome, unansweredCause } from './telnyx-events'
import { telnyxPublicKey, verifyTelnyxSignature } from './telnyx-signature'
import { warmLegEvent } from './telnyx-warm'

export interface TelnyxConfig {
  apiKey: string
  /** The Call Control application's id (Telnyx calls it `connection_id`). */
  connectionId: string
  /** The account's Ed25519 public key, base64 (webhooks are verified with it). */
  publicKey: string
  /** Default https://api.telnyx.com */
  apiBaseUrl: string
  /** Our own public address: webhooks and the media bridge are reached there. */
  publicBaseUrl: string
  /** The media bridge's per-call token (src/voice/tokens.ts), in the stream URL's path. */
  mediaToken?: (callId: string, attempt: number) => string
  /** Unix time for the signatures' tolerance: Telnyx stamps them with the wall clock. */
  wallClock?: () => number
  /** A number's own Telnyx account, when its holder brought one. */
  accountOf?: CarrierAccountOf
  /** Where a webhook's event id is claimed once across instances (the coordination store: Redis when several share the calls). */
  claims: Pick<Coordination, 'idempotencyBegin' | 'idempotencyRelease'>
  /**
   * Is the caller of a warm transfer still waiting for the person? A person who presses to take
   * the call after the caller hung up is told so instead of being bridged to nobody. Unset: yes.
   */
  transferOpen?: (callId: string, attempt: number) => Promise<boolean>
}

/** An account calls are placed and verified with: the instance's, or a number's own. */
interface Account {
  apiKey: string
  connectionId: string
  key: KeyObject
}

/** What a number's own account must name. */
const ACCOUNT_FIELDS = ['apiKey', 'connectionId', 'publicKey'] as const

/** Telnyx answers a command in well under a second; 10 s bounds a stalled one (as Twilio's adapter does). */
const REST_TIMEOUT_MS = 10_000
/**
 * How long a transfer's person may ring: Telnyx's own default `timeout_secs` for a transfer, 30 s,
 * the same five rings Twilio's `<Dial>` gives.
 */
export const TELNYX_TRANSFER_RING_SECONDS = 30

/**
 * How long a webhook's event id is claimed, so that Telnyx sending it again (no 2xx in time) is
 * dropped on whichever instance it lands: ten minutes, twice the 300 s signature tolerance a
 * delivery is taken within, which Telnyx's resends of a call's webhooks (seconds apart) stay well
 * inside; the claims then expire on their own.
 */
export const TELNYX_EVENT_CLAIM_MS = 10 * 60_000

/** Where Telnyx posts a call's webhooks. */
export const TELNYX_WEBHOOK_PATH = '/telephony/telnyx/events'

/** An incoming call, as the calls feature answers it. */
export type TelnyxIncoming = (call: { from: string; to: string; callRef: string; at: number }) => Promise<{ callId: string; attempt: number } | null>

/** Telnyx's error body as one line: "title: detail (error code)". */
async function reasonOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { errors?: { code?: string | number; title?: string; detail?: string }[] } | null // cast: Telnyx's documented error shape, read defensively
  const e = body?.errors?.[0]
  if (!e) return `HTTP ${res.status}`
  const text = [e.title, e.detail].filter(Boolean).join(': ') || `HTTP ${res.status}`
  return e.code !== undefined ? `${text} (error ${e.code})` : text
}

export class TelnyxTelephony implements Telephony {
  readonly name = 'telnyx'
  private readonly listeners: ((event: TelephonyEvent) => Promise<void> | void)[] = []
  private readonly own: Account

  constructor(private readonly config: TelnyxConfig) {
    this.own = { apiKey: config.apiKey, connectionId: config.connectionId, key: telnyxPublicKey(config.publicKey) }
  }

  /** The account of calls on `number`: its own when its holder brought one, else the instance's. Throws naming what an own account lacks. */
  private async accountFor(number: string | null | undefined): Promise<Account> {
    const own = number && this.config.accountOf ? await this.config.accountOf(number) : null
    if (!own) return this.own
    const missing = ACCOUNT_FIELDS.filter((f) => !own[f])
    if (missing.length) throw new Error(`the Telnyx account of ${number} has no ${missing.join(', ')}`)
    return { apiKey: own.apiKey!, connectionId: own.connectionId!, key: telnyxPublicKey(own.publicKey!) }
  }

  onEvent(listener: (event: TelephonyEvent) => Promise<void> | void): void {
    this.listeners.push(listener)
  }

  private get webhookUrl(): string {
    return `${this.config.publicBaseUrl.replace(/\/$/, '')}${TELNYX_WEBHOOK_PATH}`
  }

  /** Telnyx signs no media socket: the media token its stream's `start` carries is the proof (tokens.ts). */
  mediaUpgradeRefusal(_url: string, _headers: Headers): string | null {
    return null
  }

  /**
   * A number's own account, checked before it is kept: its three fields, a public key that is an
   * Ed25519 key, and its key and application as Telnyx sees them (`GET
   * /v2/call_control_applications/{connectionId}` with its key: 401 a wrong key, 404 an
   * application the account does not have).
   */
  async verifyAccount(account: CarrierAccount): Promise<void> {
    const missing = ACCOUNT_FIELDS.filter((f) => !account[f])
    if (missing.length) throw new AccountRefused(`a Telnyx account needs ${missing.join(', ')}`)
    try {
      telnyxPublicKey(account.publicKey!)
    } catch (err) {
      throw new AccountRefused((err as Error).message)
    }
    const res = await fetch(`${this.config.apiBaseUrl.replace(/\/$/, '')}/v2/call_control_applications/${encodeURIComponent(account.connectionId!)}`, {
      headers: { authorization: `Bearer ${account.apiKey}`, accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(REST_TIMEOUT_MS),
    })
    if (res.ok) return
    const reason = `Telnyx refused the account: ${await reasonOf(res)}`
    if (res.status >= 500 || res.status === 429) throw new Error(reason)
    throw new AccountRefused(reason)
  }

  /** The media bridge's socket for the try, its token in the path (a stream_url's query is Telnyx's to keep or not). */
  streamUrl(callId: string, attempt: number): string {
    const wss = this.config.publicBaseUrl.replace(/^http/, 'ws').replace(/\/$/, '')
    return `${wss}/media/${encodeURIComponent(callId)}/${encodeURIComponent(this.config.mediaToken?.(callId, attempt) ?? '')}`
  }

  /** The stream's settings, the same on `streaming_start` and on an incoming call's `answer`. */
  private streamParams(callId: string, attempt: number) {
    return {
      stream_url: this.streamUrl(callId, attempt),
      stream_track: 'inbound_track',
      stream_codec: 'PCMU',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMU',
    }
  }

  async place(request: PlaceRequest): Promise<Placed> {
    const account = await this.accountFor(request.from).catch((err: Error) => {
      throw new PlacementRefused(`Telnyx cannot place the call: ${err.message}`)
    })
    const state: LegState = { c: request.callId, a: request.attempt, n: request.from, ...(request.detectMachines ? { m: request.leaveVoicemail ? ('drop' as const) : ('detect' as const) } : {}) }
    const res = await this.rest(account, '/v2/calls', {
      connection_id: account.connectionId,
      to: request.to,
      from: request.from,
      webhook_url: this.webhookUrl,
      webhook_url_method: 'POST',
      client_state: encodeLegState(state),
      answering_machine_detection: state.m === 'drop' ? 'detect_beep' : state.m === 'detect' ? 'detect' : 'disabled',
    })
    const body = res.ok ? ((await res.json().catch(() => null)) as { data?: { call_control_id?: string } } | null) : null // cast: Telnyx's documented call resource, read defensively
    if (res.ok && body?.data?.call_control_id) return { callRef: body.data.call_control_id }
    throw new PlacementRefused(`Telnyx refused the call: ${res.ok ? 'no call_control_id in its answer' : await reasonOf(res)}`)
  }

  async hangUp(callRef: string, _answered: boolean, from?: string | null): Promise<void> {
    const res = await this.rest(await this.accountFor(from), `/v2/calls/${encodeURIComponent(callRef)}/actions/hangup`, {})
    // A call that already ended answers 422 (error 90018): it is ended either way.
    if (res.status >= 500 || res.status === 401 || res.status === 403) throw new Error(`Telnyx could not end call ${callRef}: ${await reasonOf(res)}`)
  }

  async transfer(request: TransferRequest): Promise<void> {
    const res = await this.rest(await this.accountFor(request.from), `/v2/calls/${encodeURIComponent(request.callRef)}/actions/transfer`, {
      to: request.to,
      ...(request.from ? { from: request.from } : {}),
      timeout_secs: TELNYX_TRANSFER_RING_SECONDS,
      webhook_url: this.webhookUrl,
      webhook_url_method: 'POST',
      target_leg_client_state: encodeLegState({ c: request.callId, a: request.attempt, l: 'transfer', ...(request.from ? { n: request.from } : {}) }),
    })
    if (!res.ok) throw new Error(`Telnyx would not transfer the call: ${await reasonOf(res)}`)
  }

  /** Warm: the person's leg, dialed from our number, rung as long as a cold transfer; the brief rides in its client_state. */
  async warmTransfer(request: WarmTransferRequest): Promise<{ legRef: string }> {
    if (!request.from) throw new Error('the call has no number of ours to call the person from')
    const account = await this.accountFor(request.from)
    const res = await this.rest(account, '/v2/calls', {
      connection_id: account.connectionId,
      to: request.to,
      from: request.from,
      timeout_secs: TELNYX_TRANSFER_RING_SECONDS,
      webhook_url: this.webhookUrl,
      webhook_url_method: 'POST',
      // One call session with the caller's call it is to be bridged to. Not bridge_intent: that
      // would dial from the linked call's `from`, on an incoming call the caller's own number.
      link_to: request.callRef,
      client_state: encodeLegState({ c: request.callId, a: request.attempt, l: 'warm', n: request.from, b: request.brief }),
    })
    const body = res.ok ? ((await res.json().catch(() => null)) as { data?: { call_control_id?: string } } | null) : null // cast: Telnyx's documented call resource, read defensively
    if (res.ok && body?.data?.call_control_id) return { legRef: body.data.call_control_id }
    throw new Error(`Telnyx would not call ${request.to}: ${res.ok ? 'no call_control_id in its answer' : await reasonOf(res)}`)
  }

  /** Warm: the caller's call is bridged to the person's leg, then our stream on it stops. */
  async joinTransfer(request: JoinRequest): Promise<void> {
    const account = await this.accountFor(request.from)
    const res = await this.rest(account, `/v2/calls/${encodeURIComponent(request.callRef)}/actions/bridge`, { call_control_id: request.legRef })
    if (!res.ok) throw new Error(`Telnyx would not join the call to ${request.to}: ${await reasonOf(res)}`)
    await this.rest(account, `/v2/calls/${encodeURIComponent(request.callRef)}/actions/streaming_stop`, {}).catch(() => null)
  }

  /**
   * A webhook Telnyx sent. Refused (its reason) unless its Ed25519 signature verifies within the
   * tolerance; otherwise the try's event goes to the listeners, and the call is streamed, hung up
   * or answered as the event asks. `answer` takes an incoming call.
   */
  async webhook(body: string, signature: string | null, timestamp: string | null, at: number, answer?: TelnyxIncoming): Promise<{ refused: string } | null> {
    // Which account signed it is read from the body before it is trusted: only that account's key
    // can make the signature verify, so a forged body naming another number gains nothing.
    const hook = parseWebhook(body)
    const p = hook?.payload ?? {}
    const state = decodeLegState(p.client_state)
    const incoming = hook?.eventType === 'call.initiated' && p.direction === 'incoming' && !state
    const ours = incoming ? (typeof p.to === 'string' ? p.to : null) : state?.n
    const account = await this.accountFor(ours).catch(() => null)
    if (!account) return { refused: `the Telnyx account of ${ours} cannot verify webhooks` }
    const verdict = verifyTelnyxSignature(account.key, body, signature, timestamp, (this.config.wallClock ?? Date.now)())
    if (!verdict.ok) return { refused: verdict.reason }
    if (!hook) return null
    // Telnyx resends an event it got no 2xx for, perhaps to another instance: the first to claim its id handles it.
    const claim = hook.id ? { key: `telnyx-event:${hook.id}`, owner: randomUUID() } : null
    if (claim && (await this.config.claims.idempotencyBegin(claim.key, TELNYX_EVENT_CLAIM_MS, claim.owner)).state !== 'started') return null
    try {
      await this.handle(hook, state, incoming, account, at, answer)
    } catch (err) {
      // Not handled: the resend Telnyx makes of a failed delivery is taken.
      if (claim) await this.config.claims.idempotencyRelease(claim.key, claim.owner).catch(() => {})
      throw err
    }
    return null
  }

  /** A verified webhook, taken once: the try's event goes to the listeners and the call is commanded as it asks. */
  private async handle(hook: TelnyxWebhook, state: LegState | null, incoming: boolean, account: Account, at: number, answer?: TelnyxIncoming): Promise<void> {
    const p = hook.payload
    const callRef = typeof p.call_control_id === 'string' ? p.call_control_id : ''
    if (incoming) {
      await this.incoming(account, callRef, p, at, answer)
      return
    }
    if (!state || !callRef) return
    const base = { callId: state.c, attempt: state.a, callRef, at }
    if (state.l === 'warm') {
      const command = (action: string, body: Record<string, unknown>) => this.rest(account, `/v2/calls/${encodeURIComponent(callRef)}/actions/${action}`, body)
      await warmLegEvent(hook, state, base, { command, emit: (e) => this.emit(e), transferOpen: this.config.transferOpen })
      return
    }
    if (state.l === 'transfer') {
      if (hook.eventType === 'call.answered') await this.emit({ ...base, type: 'transfer_answered' })
      if (hook.eventType === 'call.hangup') {
        const outcome = transferOutcome(p.hangup_cause)
        const seconds = outcome === 'answered' ? hangupSeconds(hook) : undefined
        await this.emit({
          ...base,
          type: 'transfer_ended',
          outcome,
          ...(seconds !== undefined ? { seconds } : {}),
          ...(outcome === 'failed' ? { error: `Telnyx could not connect the transfer (${String(p.hangup_cause ?? 'no cause')})` } : {}),
        })
      }
      return
    }
    switch (hook.eventType) {
      case 'call.answered':
        // With machines ending the try, the answer waits for the verdict (call.machine.detection.ended).
        if (state.m !== 'detect') await this.connect(base, state.n)
        break
      case 'call.machine.detection.ended': {
        const by = machineVerdict(p.result)
        if (state.m === 'detect') {
          if (by === 'machine') {
            await this.hangUp(callRef, true, state.n).catch(() => {})
            await this.emit({ ...base, type: 'unanswered', hangup: 'voicemail' })
          } else await this.connect(base, state.n)
        } else if (state.m === 'drop' && by !== 'machine') await this.emit({ ...base, type: 'answeredBy', by })
        break
      }
      case 'call.machine.greeting.ended':
        // A voicemail drop: the machine's greeting is over (a beep, or silence), the message may start.
        if (state.m === 'drop') await this.emit({ ...base, type: 'answeredBy', by: 'machine' })
        break
      case 'streaming.failed':
        await this.hangUp(callRef, true, state.n).catch(() => {})
        await this.emit({ ...base, type: 'ended', hangup: 'failed', error: `Telnyx could not stream the call: ${String(p.failure_reason ?? 'no reason given')}` })
        break
      case 'call.hangup': {
        const unanswered = unansweredCause(p.hangup_cause)
        if (unanswered) await this.emit({ ...base, type: 'unanswered', hangup: unanswered })
        else if (p.hangup_cause !== 'originator_cancel') await this.emit({ ...base, type: 'ended', hangup: 'answered' })
        break
      }
      default:
        // call.initiated, call.bridged, call.dtmf.received (the stream carries the digits),
        // streaming.started/stopped: nothing for the chart.
        break
    }
  }

  /** The answer reached the chart: the call's audio is streamed to the bridge (or the call fails, named). */
  private async connect(base: { callId: string; attempt: number; callRef: string; at: number }, from: string | undefined): Promise<void> {
    await this.emit({ ...base, type: 'answered' })
    const path = `/v2/calls/${encodeURIComponent(base.callRef)}/actions/streaming_start`
    const res = await this.accountFor(from)
      .then((account) => this.rest(account, path, this.streamParams(base.callId, base.attempt)))
      .catch((err: Error) => err)
    if (res instanceof Response && res.ok) return
    const reason = res instanceof Response ? await reasonOf(res) : res.message
    await this.hangUp(base.callRef, true, from).catch(() => {})
    await this.emit({ ...base, type: 'ended', hangup: 'failed', error: `Telnyx would not stream the call: ${reason}` })
  }

  /** An incoming call: answered with its stream when the service takes it, else rejected busy. */
  private async incoming(account: Account, callRef: string, p: Record<string, unknown>, at: number, answer?: TelnyxIncoming): Promise<void> {
    const from = typeof p.from === 'string' ? p.from : ''
    const to = typeof p.to === 'string' ? p.to : ''
    const taken = answer && callRef ? await answer({ from, to, callRef, at }) : null
    if (!taken) {
      await this.rest(account, `/v2/calls/${encodeURIComponent(callRef)}/actions/reject`, { cause: 'USER_BUSY' }).catch(() => {})
      return
    }
    await this.rest(account, `/v2/calls/${encodeURIComponent(callRef)}/actions/answer`, {
      client_state: encodeLegState({ c: taken.callId, a: taken.attempt, ...(to ? { n: to } : {}) }),
      webhook_url: this.webhookUrl,
      webhook_url_method: 'POST',
      ...this.streamParams(taken.callId, taken.attempt),
    }).catch(() => {})
  }

  private async emit(event: TelephonyEvent): Promise<void> {
    for (const listener of this.listeners) await listener(event)
  }

  private rest(account: Account, path: string, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${this.config.apiBaseUrl.replace(/\/$/, '')}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(REST_TIMEOUT_MS),
    })
  }
}
