/**
 * The telephony port: what the calls feature asks of a phone network (place a try, hang it up)
 * and what the network reports back about it, in the call chart's terms. Adapters: `sandbox`
 * (sandbox.ts, docs/design.md's simulated network, the default) and `twilio` (twilio.ts).
 */
import type { TransferOutcome, UnansweredHangup } from '../../../machines/call'

/**
 * A number's own account at the carrier (docs/spec.md `carrierCredentials`: a number brought with
 * its credentials), as its holder entered it: the network reads the fields it needs (Telnyx:
 * `apiKey`, `connectionId`, `publicKey`) and places, commands and verifies that number's calls
 * with them instead of the instance's.
 */
export type CarrierAccount = Readonly<Record<string, string>>

/** The network will not take a number's own account (a wrong key, an application it does not have): the message says why. */
export class AccountRefused extends Error {
  override readonly name = 'AccountRefused'
}

/** The carrier account of one of our numbers, or null when the number uses the instance's. */
export type CarrierAccountOf = (number: string) => Promise<CarrierAccount | null>

export interface PlaceRequest {
  callId: string
  attempt: number
  /** E.164 */
  to: string
  from: string
  /** Answering-machine detection asked (the agent's `voice.detectMachines`). */
  detectMachines: boolean
  /**
   * A machine gets a message (the agent's `voice.voicemailMessage`): the call connects at once
   * and the network reports who answered (`answeredBy`), a machine only once its greeting has
   * ended (the beep). Without it a machine detected on pickup ends the try `missed` (`voicemail`).
   */
  leaveVoicemail?: boolean
}

/** Who answered, as answering-machine detection judged it: `machine` once its greeting has ended. */
export type AnsweredBy = 'human' | 'machine' | 'fax' | 'unknown'

export interface Placed {
  /** The network's reference of this try (docs/spec.md `callRef`). */
  callRef: string
}

/** The network would not place the call (docs/spec.md: the POST answers 502 and the call is failed). */
export class PlacementRefused extends Error {
  override readonly name = 'PlacementRefused'
}

/** Hand a live call to another number (a cold transfer): the caller is put through, our media stream closes. */
export interface TransferRequest {
  callId: string
  attempt: number
  callRef: string
  /** E.164: the person the caller is put through to. */
  to: string
  /** Our number the person sees calling (the call's own number). */
  from: string | null
}

/** Warm: call the person (a second leg from `from`) and tell them `brief`: who is waiting and why. */
export interface WarmTransferRequest extends TransferRequest {
  brief: string
}

/** Warm: join the caller to the person's leg `legRef`, who took the call; our media stream closes. */
export interface JoinRequest extends TransferRequest {
  legRef: string
}

interface TryRef {
  callId: string
  attempt: number
  callRef: string
  /** When it happened, on the service clock. */
  at: number
}

export type TelephonyEvent =
  | (TryRef & { type: 'answered' })
  | (TryRef & { type: 'unanswered'; hangup: UnansweredHangup })
  /** `failed`: the network lost the call's media stream (its server went away); the reason in `error`. */
  | (TryRef & { type: 'ended'; hangup: 'answered' | 'before_agent' | 'failed'; error?: string })
  /** A transfer's person picked up (warm: `legRef`, their leg's reference). */
  | (TryRef & { type: 'transfer_answered'; legRef?: string })
  /** Warm: the person heard the brief and took the call. */
  | (TryRef & { type: 'transfer_accepted'; legRef?: string })
  /** A transfer's leg is over (`seconds` answered; warm, before the join: declined), or it never connected. */
  | (TryRef & { type: 'transfer_ended'; outcome: TransferOutcome; seconds?: number; error?: string })
  /** Who answered a call placed with `leaveVoicemail` (its media stream carries the verdict to the agent). */
  | (TryRef & { type: 'answeredBy'; by: AnsweredBy })

export interface Telephony {
  readonly name: string
  place(request: PlaceRequest): Promise<Placed>
  /**
   * Ends a try at the network: a live (`answered`) call hung up, a ringing one cancelled. Idempotent.
   * `from`: our number the try is on, whose own carrier account (if it has one) ends it.
   */
  hangUp(callRef: string, answered: boolean, from?: string | null): Promise<void>
  /** Puts a live call through to another number and leaves it (cold transfer); throws when the network will not. */
  transfer(request: TransferRequest): Promise<void>
  /** Warm: places the person's leg, which hears the brief; its reference, or throws when the network will not place it. */
  warmTransfer(request: WarmTransferRequest): Promise<{ legRef: string }>
  /** Warm: joins the caller to the leg and leaves (our media stream closes); throws when the network will not. */
  joinTransfer(request: JoinRequest): Promise<void>
  /**
   * Checks a number's own account with the network before it is kept: throws `AccountRefused`
   * with the network's reason, or another error when the network could not be asked.
   */
  verifyAccount(account: CarrierAccount): Promise<void>
  /**
   * Why a media socket the network opens is refused (403), or null: the network's proof that it
   * opened it (Twilio signs the socket's URL in X-Twilio-Signature); one that signs none lets it
   * through. `url`: the socket's public URL, as the network was given it.
   */
  mediaUpgradeRefusal(url: string, headers: Headers): string | null
  /** Reports what happened to placed tries. */
  onEvent(listener: (event: TelephonyEvent) => Promise<void> | void): void
}

/** A call the network rings at one of our numbers. */
export interface IncomingCall {
  from: string
  to: string
  callRef: string
  at: number
}

/** What the service answered: the call it became, or null when nobody takes it (the caller hears busy). */
export type IncomingAnswer = { callId: string; attempt: number } | null
