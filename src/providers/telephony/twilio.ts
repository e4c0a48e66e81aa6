/**
 * The Twilio adapter of the telephony port: places calls through Twilio's REST API
 * (`POST /2010-04-01/Accounts/{sid}/Calls.json`, form-encoded, Basic auth with the account SID and
 * auth token) with TwiML that connects the call's audio to our media bridge
 * (`<Connect><Stream url="wss://…/media/{callId}">`, the bridge's token as a `<Parameter>`, since a
 * Stream URL takes no query string), asks for status callbacks, maps Twilio's call statuses and
 * answering-machine results to the call chart's events, and hangs up through the same API
 * (`Status=completed` for a live call, `canceled` while it rings). A cold transfer updates the live
 * call with `<Dial>` TwiML (`Twiml=` on the same update), which ends our stream; the `<Number>`'s
 * status callback says when the person answered and the `<Dial action>` how the leg ended, and
 * answers `<Hangup/>` so the call ends with it. A warm transfer places a second call to the
 * person (`POST Calls.json`) whose TwiML `<Say>`s the brief inside a `<Gather>` for one key; its
 * action says whether they pressed 1 (taken: they are answered into a `<Conference>` and the
 * caller's live call is updated to join it, which ends our stream) or not (declined), and its
 * status callback when it was answered, not answered, or ended. The REST base URL is
 * configurable (TWILIO_API_BASE_URL) so tests use a local fake speaking the same protocol.
 */
import type { TransferOutcome, UnansweredHangup } from '../../../machines/call'
import {
  AccountRefused,
  type AnsweredBy,
  type JoinRequest,
  type Placed,
  PlacementRefused,
  type PlaceRequest,
  type Telephony,
  type TelephonyEvent,
  type TransferRequest,
  type WarmTransferRequest,
} from './port'
import { verifyTwilioSignature } from './twilio-signature'

export interface TwilioConfig {
  accountSid: string
  authToken: string
  /** Default https://api.twilio.com */
  apiBaseUrl: string
  /** Our own public address: status callbacks and the media bridge are reached there. */
  publicBaseUrl: string
  /** The media bridge's per-call token (src/voice/tokens.ts), sent as the TwiML `<Parameter name="token">`. */
  mediaToken?: (callId: string, attempt: number) => string
  /**
   * Is the caller of a warm transfer still waiting for the person? A caller who hung up while the
   * person's leg was being placed leaves a leg nobody ends: when its person presses to take the
   * call, they are told the caller left instead of waiting alone in the conference. Unset: yes.
   */
  transferOpen?: (callId: string, attempt: number) => Promise<boolean>
}

/** Twilio answers a REST call in well under a second; 10 s bounds a stalled one (the POST then fails as a 502). */
const REST_TIMEOUT_MS = 10_000
/** The status changes our chart hears about (Twilio's StatusCallbackEvent values). */
const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed']
const MACHINE = /^(machine_|fax)/

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** TwiML that streams the call to our media bridge for `callId`. */
export function streamTwiml(publicBaseUrl: string, callId: string, token: string): string {
  const wss = publicBaseUrl.replace(/^http/, 'ws').replace(/\/$/, '')
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${xml(`${wss}/media/${callId}`)}"><Parameter name="token" value="${xml(token)}"/></Stream></Connect></Response>`
}

/**
 * How long a transfer's person may ring before `<Dial>` gives up: Twilio's own default for
 * `timeout`, about five rings.
 */
export const TRANSFER_RING_SECONDS = 30

/** TwiML that puts the live call through to `to`, telling us when the person answers and how the leg ended. */
export function transferTwiml(publicBaseUrl: string, request: { callId: string; attempt: number; to: string; from: string | null }): string {
  const base = `${publicBaseUrl.replace(/\/$/, '')}/telephony/twilio/transfer`
  const query = `call=${encodeURIComponent(request.callId)}&attempt=${request.attempt}`
  const callerId = request.from ? ` callerId="${xml(request.from)}"` : ''
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="${xml(`${base}/ended?${query}`)}" method="POST" timeout="${TRANSFER_RING_SECONDS}"${callerId}>` +
    `<Number statusCallbackEvent="answered" statusCallback="${xml(`${base}/answered?${query}`)}" statusCallbackMethod="POST">${xml(request.to)}</Number></Dial></Response>`
  )
}

/** TwiML the `<Dial action>` is answered with: the leg is over, so is the call. */
export const HANG_UP_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>'

/**
 * How long the person has to press 1 once the brief has been said: twice `<Gather>`'s 5 s default,
 * a person deciding whether to take a call rather than typing a digit they know.
 */
export const WARM_KEY_SECONDS = 10
/** The key that takes a warm transfer. */
export const WARM_TAKE_KEY = '1'

/** The conference a warm transfer's two legs meet in: our own ids only (Twilio asks for no personal data in room names). */
export const warmRoom = (callId: string, attempt: number) => `transfer-${callId}-${attempt}`

const warmQuery = (r: { callId: string; attempt: number }) => `call=${encodeURIComponent(r.callId)}&attempt=${r.attempt}`
const warmBase = (publicBaseUrl: string) => `${publicBaseUrl.replace(/\/$/, '')}/telephony/twilio/warm`

/** The person's leg of a warm transfer: the brief, then one key (1 takes the call); the action hears it either way. */
export function warmLegTwiml(publicBaseUrl: string, request: { callId: string; attempt: number; brief: string }): string {
  const action = `${warmBase(publicBaseUrl)}/reply?${warmQuery(request)}`
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Response><Gather action="${xml(action)}" method="POST" numDigits="1" timeout="${WARM_KEY_SECONDS}" actionOnEmptyResult="true">` +
    `<Say>${xml(request.brief)} Press ${WARM_TAKE_KEY} to take the call.</Say></Gather></Response>`
  )
}

/** A leg in the warm transfer's conference: either one leaving ends it (so the other's call ends too); silence while alone. */
function conference(callId: string, attempt: number): string {
  return `<Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false" waitUrl="">${xml(warmRoom(callId, attempt))}</Conference>`
}

/** The person took the call: the `<Gather>` action is answered with the conference. */
export function warmTakenTwiml(ref: { callId: string; attempt: number }): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial>${conference(ref.callId, ref.attempt)}</Dial></Response>`
}

/** The person pressed to take the call, but the caller had already hung up. */
export const WARM_GONE_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Sorry, the caller has already left. Goodbye.</Say><Hangup/></Response>'

/** The person did not take it: their leg ends politely. */
export const WARM_DECLINED_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Thank you. Goodbye.</Say><Hangup/></Response>'

/** The caller's live call joins the conference; the `<Dial action>` (`/warm/joined`) tells when it is over, and is answered `<Hangup/>`. */
export function warmJoinTwiml(publicBaseUrl: string, ref: { callId: string; attempt: number }): string {
  const action = `${warmBase(publicBaseUrl)}/joined?${warmQuery(ref)}`
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="${xml(action)}" method="POST">${conference(ref.callId, ref.attempt)}</Dial></Response>`
}

/** Twilio's DialCallStatus as a transfer's outcome. */
export function dialOutcome(status: string | undefined): TransferOutcome {
  if (status === 'completed' || status === 'answered') return 'answered'
  if (status === 'busy') return 'busy'
  if (status === 'no-answer') return 'no_answer'
  return 'failed'
}

/** A status callback's parameters as the chart's event for the try, or null when nothing changed for it. */
export function statusEvent(params: Record<string, string>, ref: { callId: string; attempt: number }, at: number): TelephonyEvent | null {
  const base = { ...ref, callRef: params.CallSid ?? '', at }
  const unanswered = (hangup: UnansweredHangup): TelephonyEvent => ({ ...base, type: 'unanswered', hangup })
  switch (params.CallStatus) {
    case 'in-progress':
      return MACHINE.test(params.AnsweredBy ?? '') ? unanswered('voicemail') : { ...base, type: 'answered' }
    case 'completed':
      return MACHINE.test(params.AnsweredBy ?? '') ? unanswered('voicemail') : { ...base, type: 'ended', hangup: 'answered' }
    case 'busy':
      return unanswered('busy')
    case 'no-answer':
      return unanswered('no_answer')
    case 'failed':
      return unanswered('unreachable')
    default:
      // queued, initiated, ringing: still ringing; canceled: we ended it ourselves.
      return null
  }
}

/** Twilio's AnsweredBy as the port's verdict: `machine_start` comes only without DetectMessageEnd. */
export function answeredBy(value: string | undefined): AnsweredBy {
  if (value === 'human') return 'human'
  if (value === 'fax') return 'fax'
  if (value?.startsWith('machine_')) return 'machine'
  return 'unknown'
}

export class TwilioTelephony implements Telephony {
  readonly name = 'twilio'
  private readonly listeners: ((event: TelephonyEvent) => Promise<void> | void)[] = []

  constructor(private readonly config: TwilioConfig) {}

  onEvent(listener: (event: TelephonyEvent) => Promise<void> | void): void {
    this.listeners.push(listener)
  }

  async place(request: PlaceRequest): Promise<Placed> {
    const form = new URLSearchParams({
      To: request.to,
      From: request.from,
      Twiml: streamTwiml(this.config.publicBaseUrl, request.callId, this.config.mediaToken?.(request.callId, request.attempt) ?? ''),
      StatusCallback: this.statusUrl(request.callId, request.attempt),
      StatusCallbackMethod: 'POST',
    })
    for (const e of STATUS_EVENTS) form.append('StatusCallbackEvent', e)
    if (request.detectMachines && request.leaveVoicemail) {
      // Voicemail drop (Twilio's answering-machine detection docs): the call connects at once
      // (AsyncAmd) and the verdict comes to our callback; for a machine, only once its greeting
      // has ended (DetectMessageEnd: AnsweredBy machine_end_beep, _silence or _other).
      form.set('MachineDetection', 'DetectMessageEnd')
      form.set('AsyncAmd', 'true')
      form.set('AsyncAmdStatusCallback', this.callbackUrl('amd', request.callId, request.attempt))
      form.set('AsyncAmdStatusCallbackMethod', 'POST')
    } else if (request.detectMachines) form.set('MachineDetection', 'Enable')
    const res = await this.rest('Calls.json', form)
    const body = (await res.json().catch(() => null)) as { sid?: string; message?: string; code?: number } | null
    if (res.status >= 200 && res.status < 300 && body?.sid) return { callRef: body.sid }
    throw new PlacementRefused(`Twilio refused the call: ${body?.message ?? `HTTP ${res.status}`}${body?.code ? ` (error ${body.code})` : ''}`)
  }

  /** A number's own Twilio account is not taken: a Twilio line's calls all go out on the instance's account. */
  async verifyAccount(): Promise<void> {
    throw new AccountRefused("numbers on a Twilio line take no carrierAccount: their calls use the instance's Twilio account")
  }

  async hangUp(callRef: string, answered: boolean): Promise<void> {
    const res = await this.rest(`Calls/${encodeURIComponent(callRef)}.json`, new URLSearchParams({ Status: answered ? 'completed' : 'canceled' }))
    // A call that already ended answers 4xx on this update: it is ended either way.
    if (res.status >= 500) throw new Error(`Twilio could not end call ${callRef}: HTTP ${res.status}`)
  }

  async transfer(request: TransferRequest): Promise<void> {
    const res = await this.rest(`Calls/${encodeURIComponent(request.callRef)}.json`, new URLSearchParams({ Twiml: transferTwiml(this.config.publicBaseUrl, request) }))
    if (res.status >= 200 && res.status < 300) return
    const body = (await res.json().catch(() => null)) as { message?: string; code?: number } | null
    throw new Error(`Twilio would not transfer the call: ${body?.message ?? `HTTP ${res.status}`}${body?.code ? ` (error ${body.code})` : ''}`)
  }

  /** Warm: the person's leg, placed like a call of ours (`Timeout` as a cold `<Dial>`'s ring), briefed by `<Say>`. */
  async warmTransfer(request: WarmTransferRequest): Promise<{ legRef: string }> {
    if (!request.from) throw new Error('the call has no number of ours to call the person from')
    const form = new URLSearchParams({
      To: request.to,
      From: request.from,
      Twiml: warmLegTwiml(this.config.publicBaseUrl, request),
      Timeout: String(TRANSFER_RING_SECONDS),
      StatusCallback: `${warmBase(this.config.publicBaseUrl)}/leg?${warmQuery(request)}`,
      StatusCallbackMethod: 'POST',
    })
    for (const e of ['answered', 'completed']) form.append('StatusCallbackEvent', e)
    const res = await this.rest('Calls.json', form)
    const body = (await res.json().catch(() => null)) as { sid?: string; message?: string; code?: number } | null
    if (res.status >= 200 && res.status < 300 && body?.sid) return { legRef: body.sid }
    throw new Error(`Twilio would not call ${request.to}: ${body?.message ?? `HTTP ${res.status}`}${body?.code ? ` (error ${body.code})` : ''}`)
  }

  /** Warm: the caller's live call is updated to join the person's conference (our stream stops). */
  async joinTransfer(request: JoinRequest): Promise<void> {
    const res = await this.rest(`Calls/${encodeURIComponent(request.callRef)}.json`, new URLSearchParams({ Twiml: warmJoinTwiml(this.config.publicBaseUrl, request) }))
    if (res.status >= 200 && res.status < 300) return
    const body = (await res.json().catch(() => null)) as { message?: string; code?: number } | null
    throw new Error(`Twilio would not join the call to ${request.to}: ${body?.message ?? `HTTP ${res.status}`}${body?.code ? ` (error ${body.code})` : ''}`)
  }

  /**
   * A warm transfer's callback: `leg`, the person's status callback (answered, or how it ended);
   * `reply`, its `<Gather>` action (pressed 1: taken, else declined); `joined`, the caller's
   * `<Dial action>` once the conference is over (the leg's seconds run from its answer, in the
   * chart). Answers the TwiML the leg or call goes on with ('' for a status callback), or null when
   * the signature does not verify.
   */
  async warmCallback(kind: 'leg' | 'reply' | 'joined', url: string, params: Record<string, string>, signature: string | null, at: number): Promise<string | null> {
    if (!verifyTwilioSignature(this.config.authToken, url, params, signature)) return null
    const query = new URL(url).searchParams
    const callId = query.get('call')
    const attempt = Number(query.get('attempt'))
    if (!callId || !Number.isInteger(attempt)) return kind === 'leg' ? '' : HANG_UP_TWIML
    const legRef = params.CallSid ?? ''
    // The caller's own reference is not on a leg's callbacks; the chart knows the call by its id.
    const base = { callId, attempt, callRef: params.ParentCallSid ?? '', at }
    let event: TelephonyEvent | null = null
    let twiml = ''
    if (kind === 'joined') {
      event = { ...base, callRef: params.CallSid ?? '', type: 'transfer_ended', outcome: 'answered' }
      twiml = HANG_UP_TWIML
    } else if (kind === 'reply') {
      const taken = params.Digits === WARM_TAKE_KEY
      if (taken && this.config.transferOpen && !(await this.config.transferOpen(callId, attempt))) return WARM_GONE_TWIML
      event = taken ? { ...base, type: 'transfer_accepted', legRef } : { ...base, type: 'transfer_ended', outcome: 'declined' }
      twiml = taken ? warmTakenTwiml({ callId, attempt }) : WARM_DECLINED_TWIML
    } else {
      const seconds = Number(params.CallDuration)
      if (params.CallStatus === 'in-progress' || params.CallStatus === 'answered') event = { ...base, type: 'transfer_answered', legRef }
      // Completed: the leg was answered and is over (before the join: the chart reads it as declined).
      else if (params.CallStatus === 'completed') event = { ...base, type: 'transfer_ended', outcome: 'answered', ...(Number.isFinite(seconds) ? { seconds } : {}) }
      else if (params.CallStatus === 'busy' || params.CallStatus === 'no-answer' || params.CallStatus === 'failed') {
        const outcome = dialOutcome(params.CallStatus)
        event = { ...base, type: 'transfer_ended', outcome, ...(outcome === 'failed' ? { error: `Twilio could not call the person (${params.CallStatus})` } : {}) }
      }
      // canceled: we hung the leg up ourselves, the chart already knows.
    }
    if (event) for (const listener of this.listeners) await listener(event)
    return twiml
  }

  /**
   * A transfer callback (`answered`: the `<Number>`'s status callback; `ended`: the `<Dial action>`),
   * signed like any other; its event goes to the listeners. False when the signature does not verify.
   */
  async transferCallback(kind: 'answered' | 'ended', url: string, params: Record<string, string>, signature: string | null, at: number): Promise<boolean> {
    if (!verifyTwilioSignature(this.config.authToken, url, params, signature)) return false
    const query = new URL(url).searchParams
    const callId = query.get('call')
    const attempt = Number(query.get('attempt'))
    if (!callId || !Number.isInteger(attempt)) return true
    // The parent call's sid is the try's reference (the <Number>'s callback is the child leg's).
    const base = { callId, attempt, callRef: params.ParentCallSid ?? params.CallSid ?? '', at }
    let event: TelephonyEvent | null = null
    if (kind === 'answered') event = params.CallStatus === 'in-progress' || params.CallStatus === 'answered' ? { ...base, type: 'transfer_answered' } : null
    else {
      const outcome = dialOutcome(params.DialCallStatus)
      const seconds = Number(params.DialCallDuration)
      event = {
        ...base,
        type: 'transfer_ended',
        outcome,
        ...(outcome === 'answered' && Number.isFinite(seconds) ? { seconds } : {}),
        ...(outcome === 'failed' ? { error: `Twilio could not connect the transfer (${params.DialCallStatus ?? 'no status'})` } : {}),
      }
    }
    if (event) for (const listener of this.listeners) await listener(event)
    return true
  }

  /**
   * A status callback Twilio sent to `url` (the full URL it requested). Refused (false) unless its
   * X-Twilio-Signature verifies; otherwise the try's event goes to the listeners.
   */
  async statusCallback(url: string, params: Record<string, string>, signature: string | null, at: number): Promise<boolean> {
    if (!verifyTwilioSignature(this.config.authToken, url, params, signature)) return false
    const query = new URL(url).searchParams
    const callId = query.get('call')
    const attempt = Number(query.get('attempt'))
    if (!callId || !Number.isInteger(attempt)) return true
    const event = statusEvent(params, { callId, attempt }, at)
    if (event && event.type === 'unanswered' && event.hangup === 'voicemail' && params.CallStatus === 'in-progress') {
      // A machine answered: the agent does not talk to it (detectMachines); end it at Twilio.
      await this.hangUp(params.CallSid, true).catch(() => {})
    }
    if (event) for (const listener of this.listeners) await listener(event)
    return true
  }

  /** A media stream's upgrade is signed like a webhook, over its wss URL with no parameters. */
  mediaUpgradeRefusal(url: string, headers: Headers): string | null {
    return this.verify(url, {}, headers.get('x-twilio-signature')) ? null : 'X-Twilio-Signature does not verify'
  }

  /** Signature check of any other Twilio request (the incoming-call webhook). */
  verify(url: string, params: Record<string, string>, signature: string | null): boolean {
    return verifyTwilioSignature(this.config.authToken, url, params, signature)
  }

  private statusUrl(callId: string, attempt: number): string {
    return this.callbackUrl('status', callId, attempt)
  }

  private callbackUrl(kind: 'status' | 'amd', callId: string, attempt: number): string {
    return `${this.config.publicBaseUrl.replace(/\/$/, '')}/telephony/twilio/${kind}?call=${encodeURIComponent(callId)}&attempt=${attempt}`
  }

  /**
   * An asynchronous answering-machine verdict Twilio sent to `url` (AsyncAmdStatusCallback:
   * CallSid, AnsweredBy, MachineDetectionDuration). Refused (false) unless signed; otherwise who
   * answered goes to the listeners.
   */
  async amdCallback(url: string, params: Record<string, string>, signature: string | null, at: number): Promise<boolean> {
    if (!verifyTwilioSignature(this.config.authToken, url, params, signature)) return false
    const query = new URL(url).searchParams
    const callId = query.get('call')
    const attempt = Number(query.get('attempt'))
    if (!callId || !Number.isInteger(attempt)) return true
    const event: TelephonyEvent = { type: 'answeredBy', callId, attempt, callRef: params.CallSid ?? '', at, by: answeredBy(params.AnsweredBy) }
    for (const listener of this.listeners) await listener(event)
    return true
  }

  private async rest(path: string, form: URLSearchParams): Promise<Response> {
    const base = this.config.apiBaseUrl.replace(/\/$/, '')
    const auth = Buffer.from(`${this.config.accountSid}:${this.config.authToken}`).toString('base64')
    return fetch(`${base}/2010-04-01/Accounts/${encodeURIComponent(this.config.accountSid)}/${path}`, {
      method: 'POST',
      headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(REST_TIMEOUT_MS),
    })
  }
}
