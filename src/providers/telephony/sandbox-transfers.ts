/**
 * The sandbox network's transfers (sandbox.ts; docs/api/calls.md "Transfer", on the sandbox
 * network). Cold: the agent leaves and the caller rings the destination's sandbox phone, which
 * answers (and "says" its lines, kept in `log` for tests: nobody of ours hears a cold transfer) or
 * not, after its `ringMs`. Warm: that phone rings on a leg of its own while the caller stays with
 * the agent; answered, it "hears" the brief (`heard`) and, set to `answer`, takes the call, which
 * `join` then puts through as a cold transfer would; `voicemail` answers and takes nothing
 * (`declined`, as a machine presses no key), and the others end the leg at `ringMs`.
 *
 * It holds only the transfers' own state (the log, the warm legs); the calls, the clock's schedule
 * and the events are the network's, reached through `Switchboard`.
 */
import type { JoinRequest, TelephonyEvent, TransferRequest, WarmTransferRequest } from './port'

/** A sandbox phone as a transfer reads it (sandbox.ts SandboxPhone; not imported: that file imports this one). */
interface TransferPhone {
  pickup: string
  ringMs: number
  lines: string[]
  hangupAfterMs: number | null
}

/** What the network lends its transfers. */
export interface Switchboard {
  now(): number
  /** The network still carries this call or leg (not hung up). */
  isLive(ref: string): boolean
  /** Carries a new leg. */
  open(ref: string): void
  newRef(): string
  phone(number: string): Promise<TransferPhone>
  /** The agent's media stream on the call closes, as Twilio's does on new TwiML. */
  agentLeaves(callRef: string): void
  /** Runs `run` at `at` on the network's clock, unless `ref` was hung up meanwhile. */
  schedule(ref: string, at: number, run: () => Promise<void>): void
  /** Hangs `ref` up: nothing more happens on it. */
  forget(ref: string): void
  tell(event: TelephonyEvent): Promise<void>
}

/** What a transferred call's person did: `heard` is a warm transfer's brief. */
export interface TransferLog {
  to: string
  answered: boolean
  said: string[]
  heard?: string[]
}

export class SandboxTransfers {
  /** By the caller's call reference (tests read it). */
  readonly log = new Map<string, TransferLog>()
  /** Warm legs by the caller's call reference: the person's leg and when it was answered. */
  private readonly legs = new Map<string, { legRef: string; answeredAt: number | null }>()

  constructor(private readonly board: Switchboard) {}

  /** The caller `callRef` was hung up: its warm leg, if any, to hang up too. */
  releaseLeg(callRef: string): string | null {
    const leg = this.legs.get(callRef)
    this.legs.delete(callRef)
    return leg?.legRef ?? null
  }

  /**
   * Cold: the agent leaves (its media stream closes: `stop`, then a normal close) and the caller
   * rings `to`. Answered, the two talk until that phone's `hangupAfterMs` or the caller's own
   * hang-up; not answered, the call ends there, as Twilio's `<Dial>` then hangs up.
   */
  async cold(request: TransferRequest): Promise<void> {
    const { board } = this
    const { callRef } = request
    if (!board.isLive(callRef)) throw new Error('the call is no longer on the sandbox network')
    const phone = await board.phone(request.to)
    if (phone.pickup === 'refuse') throw new Error(`the sandbox network refused to connect ${request.to} (its phone is set to refuse)`)
    const ref = { callId: request.callId, attempt: request.attempt, callRef }
    board.agentLeaves(callRef)
    const log: TransferLog = { to: request.to, answered: false, said: [] }
    this.log.set(callRef, log)
    const rang = board.now() + phone.ringMs
    const over = async (at: number, outcome: 'answered' | 'no_answer' | 'busy' | 'failed', extra: { seconds?: number; error?: string } = {}) => {
      board.forget(callRef)
      await board.tell({ ...ref, type: 'transfer_ended', outcome, at, ...extra })
      await board.tell({ ...ref, type: 'ended', hangup: 'answered', at })
    }
    board.schedule(callRef, rang, async () => {
      // No machine detection on a transfer: a voicemail answers like a person.
      if (phone.pickup !== 'answer' && phone.pickup !== 'voicemail') {
        if (phone.pickup === 'unreachable') return over(rang, 'failed', { error: `${request.to} is unreachable` })
        return over(rang, phone.pickup === 'no_answer' ? 'no_answer' : 'busy')
      }
      log.answered = true
      log.said.push(...phone.lines)
      await board.tell({ ...ref, type: 'transfer_answered', at: rang })
      const after = phone.hangupAfterMs
      if (after !== null) board.schedule(callRef, rang + after, () => over(rang + after, 'answered', { seconds: Math.round(after / 1000) }))
    })
  }

  /** Warm: the person's phone rings on a leg of its own; the caller stays with the agent. */
  async warm(request: WarmTransferRequest): Promise<{ legRef: string }> {
    const { board } = this
    const { callRef } = request
    if (!board.isLive(callRef)) throw new Error('the call is no longer on the sandbox network')
    const phone = await board.phone(request.to)
    if (phone.pickup === 'refuse') throw new Error(`the sandbox network refused to call ${request.to} (its phone is set to refuse)`)
    const ref = { callId: request.callId, attempt: request.attempt, callRef }
    const legRef = board.newRef()
    const leg = { legRef, answeredAt: null as number | null }
    board.open(legRef)
    this.legs.set(callRef, leg)
    const log = { to: request.to, answered: false, said: [] as string[], heard: [] as string[] }
    this.log.set(callRef, log)
    const rang = board.now() + phone.ringMs
    board.schedule(legRef, rang, async () => {
      const unjoined = async (outcome: 'no_answer' | 'busy' | 'declined' | 'failed', extra: { seconds?: number; error?: string } = {}) => {
        board.forget(legRef)
        await board.tell({ ...ref, type: 'transfer_ended', outcome, at: rang, ...extra })
      }
      if (phone.pickup === 'unreachable') return unjoined('failed', { error: `${request.to} is unreachable` })
      if (phone.pickup === 'no_answer') return unjoined('no_answer')
      if (phone.pickup === 'busy' || phone.pickup === 'reject') return unjoined('busy')
      leg.answeredAt = rang
      log.answered = true
      log.heard.push(request.brief)
      await board.tell({ ...ref, type: 'transfer_answered', legRef, at: rang })
      if (phone.pickup === 'voicemail') return unjoined('declined', { seconds: 0 })
      await board.tell({ ...ref, type: 'transfer_accepted', legRef, at: rang })
    })
    return { legRef }
  }

  /** Warm: the person took the call; the agent leaves and the two talk until that phone's `hangupAfterMs` or the caller's hang-up. */
  async join(request: JoinRequest): Promise<void> {
    const { board } = this
    const { callRef } = request
    const leg = this.legs.get(callRef)
    if (!board.isLive(callRef)) throw new Error('the caller is no longer on the sandbox network')
    if (!leg || !board.isLive(leg.legRef)) throw new Error(`${request.to} is no longer on the line`)
    const phone = await board.phone(request.to)
    const ref = { callId: request.callId, attempt: request.attempt, callRef }
    board.agentLeaves(callRef)
    this.log.get(callRef)?.said.push(...phone.lines)
    const after = phone.hangupAfterMs
    if (after === null) return
    const at = board.now() + after
    board.schedule(callRef, at, async () => {
      const seconds = Math.round((at - (leg.answeredAt ?? at)) / 1000)
      board.forget(callRef)
      await board.tell({ ...ref, type: 'transfer_ended', outcome: 'answered', seconds, at })
      await board.tell({ ...ref, type: 'ended', hangup: 'answered', at })
    })
  }
}
