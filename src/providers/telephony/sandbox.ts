/**
 * The sandbox phone network (docs/design.md): places calls with no carrier. Each number behaves as the
 * console set it (`PUT /console/sandbox/phones/{number}`): it answers, does not answer, is busy,
 * rejects, is unreachable, is a voicemail, or refuses placement; after `ringMs` the outcome is
 * reported, and an answering callee hangs up after `hangupAfterMs`. Time is the service clock:
 * under the manual clock the network moves only when the clock is advanced (the calls feature
 * runs `due()` from the clock's advance hook); under the system clock, with timers. A scripted
 * callee's conversation is real-time audio, so it finishes its lines before it hangs up
 * (`calleeHangsUp`).
 *
 * The network's calls in progress live in memory, as a carrier's would live outside this process:
 * a restart loses them, and their calls end as a carrier would report a dropped line. With several
 * instances each runs a switch of the network (`switchId`, carried in its call references), so the
 * others can tell whose calls died with it (features/calls/control/lost-switches.ts).
 *
 * A transfer puts the caller through to another sandbox phone, set like any other, cold or warm
 * (sandbox-transfers.ts); `transfers` logs what each person did and heard, for tests.
 *
 * A callee whose media stream is closed by the server (1000) has been hung up on, wherever the
 * stream ran; one whose stream is cut without a close (1006: that server died) is a dropped call,
 * reported `ended` as `failed`, as a carrier ends a call whose stream went away.
 */

import type { Clock } from '../../clock'
import { randomId } from '../../ids'
import type { Collection, DocumentStore } from '../../store/port'
import type { TextToSpeech } from '../../voice/public'
import type { SandboxScripts } from '../stt/sandbox'
import {
  type CarrierAccount,
  type IncomingAnswer,
  type IncomingCall,
  type JoinRequest,
  type Placed,
  PlacementRefused,
  type PlaceRequest,
  type Telephony,
  type TelephonyEvent,
  type TransferRequest,
  type WarmTransferRequest,
} from './port'
import { type CalleeOptions, SandboxCallee } from './sandbox-callee'
import { SandboxTransfers, type TransferLog } from './sandbox-transfers'

export const SANDBOX_PICKUPS = ['answer', 'no_answer', 'busy', 'reject', 'unreachable', 'voicemail', 'refuse'] as const
export type SandboxPickup = (typeof SANDBOX_PICKUPS)[number]

export interface SandboxPhone {
  pickup: SandboxPickup
  /** How long it rings before the outcome. */
  ringMs: number
  /** What the callee says, into the media bridge (sandbox-callee.ts; prefixes `>` and `~` script interruptions). */
  lines: string[]
  /** After answering, the callee hangs up this much later; null: never (until the agent or DELETE ends it). */
  hangupAfterMs: number | null
}

/**
 * A number nobody configured answers at once and hangs up after 30 s: enough for a short
 * conversation in a demo, and a bounded call when nobody ends it (our choice; docs/api/calls.md).
 */
export const DEFAULT_PHONE: SandboxPhone = { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: 30_000 }

export interface CalleeMedia {
  /** Where this server listens (null before it does). */
  baseUrl(): string | null
  token(callId: string, attempt: number): string
  scripts: SandboxScripts
  /**
   * When the call runs on its caller's audio (a simulated call on the manual clock): how far this
   * process has judged its stream (ms), and whether the agent's side is making what comes next;
   * null otherwise or when not known here. The callee keeps to it (sandbox-callee.ts `pace`).
   */
  pace?(callId: string): { judged: number; hold: boolean } | null
  /** The callee's own voice: espeak-ng when installed, else the sandbox's formant voice. */
  tts(): TextToSpeech
}

/** A server ends a stream it hung up with 1000; 1006 (no close frame at all) means the server went away. */
const NORMAL_CLOSURE = 1000
const ABNORMAL_CLOSURE = 1006

/** The switch (instance) a call reference of the sandbox network names, or null (one instance, or not ours). */
export function switchOf(callRef: string): string | null {
  return /^SB([0-9a-z]+)-[0-9a-z]{16}$/.exec(callRef)?.[1] ?? null
}

/** A simulated call's callee (the simulations feature): its script, the real time it may take, and its lines written as it goes (sandbox-callee.ts `more`). */
export interface SimulatedCallee {
  lines: string[]
  limitMs: number
  more?: () => Promise<string | null>
  /** Recorded audio its `[clip N]` lines play (8 kHz): a replayed call's caller. */
  clips?: Int16Array[]
}

interface PhoneDoc extends SandboxPhone {
  [field: string]: unknown
  id: string
}

interface Pending {
  callRef: string
  at: number
  run: () => Promise<void>
}

export class SandboxNetwork implements Telephony {
  readonly name = 'sandbox'
  private readonly listeners: ((event: TelephonyEvent) => Promise<void> | void)[] = []
  private pending: Pending[] = []
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>[]>()
  /** Calls the network is still ringing or connecting (a hang-up removes them). */
  private readonly active = new Set<string>()

  private constructor(
    private readonly phones: Collection<PhoneDoc>,
    private readonly clock: Clock,
    readonly switchId: string | null,
  ) {}

  static async open(store: DocumentStore, clock: Clock, switchId: string | null = null): Promise<SandboxNetwork> {
    return new SandboxNetwork(await store.collection<PhoneDoc>({ name: 'sandbox_phones', indexes: [] }), clock, switchId)
  }

  /** A new call reference, naming this switch when there are several. */
  private newRef(): string {
    return this.switchId ? `SB${this.switchId}-${randomId(16)}` : `SB${randomId(16)}`
  }

  async setPhone(number: string, phone: SandboxPhone): Promise<SandboxPhone> {
    await this.phones.upsert({ id: number, ...phone })
    return phone
  }

  /**
   * Simulated callers (the simulations feature), by call id, in memory like the network's calls: the
   * call's callee answers at once, says `lines` and hangs up once the agent has answered the last
   * (or after `limitMs` of real time), whatever the clock does.
   */
  private readonly callers = new Map<string, SimulatedCallee>()

  expectCaller(callId: string, caller: SimulatedCallee): void {
    this.callers.set(callId, caller)
  }

  async phone(number: string): Promise<SandboxPhone> {
    const doc = await this.phones.get(number)
    if (!doc) return DEFAULT_PHONE
    return { pickup: doc.pickup, ringMs: doc.ringMs, lines: doc.lines, hangupAfterMs: doc.hangupAfterMs }
  }

  onEvent(listener: (event: TelephonyEvent) => Promise<void> | void): void {
    this.listeners.push(listener)
  }

  private incoming: ((call: IncomingCall) => Promise<IncomingAnswer>) | null = null
  private callees = new Map<string, SandboxCallee>()
  private media: CalleeMedia | null = null

  /** Connects answering callees to the media bridge (the calls feature, once the server listens). */
  attachMedia(media: CalleeMedia): void {
    this.media = media
  }

  /** Takes answering callees off the media bridge (a test that drives the socket itself): answers the hook-up they had. */
  detachMedia(): CalleeMedia | null {
    const media = this.media
    this.media = null
    return media
  }

  /** The callee on a live call (tests read what it heard). */
  callee(callRef: string): SandboxCallee | undefined {
    return this.callees.get(callRef)
  }

  /** The person (or machine) answers: a media client connects and speaks `lines` (when the server listens). */
  private pickUp(callRef: string, callId: string, attempt: number, lines: string[], machine?: CalleeOptions['machine'], more?: CalleeOptions['more'], clips?: Int16Array[]): void {
    const media = this.media
    const base = media?.baseUrl()
    if (!media || !base || !this.active.has(callRef)) return
    const callee = new SandboxCallee({
      url: `${base.replace(/^http/, 'ws')}/media/${callId}/${media.token(callId, attempt)}`,
      callSid: callRef,
      lines,
      callId,
      scripts: media.scripts,
      ...(media.pace ? { pace: () => media.pace!(callId) } : {}),
      tts: media.tts(),
      onClosed: (code) => void this.streamClosed({ callId, attempt, callRef }, code),
      ...(machine ? { machine } : {}),
      ...(more ? { more } : {}),
      ...(clips ? { clips } : {}),
    })
    this.callees.set(callRef, callee)
    callee.connect().catch(() => this.callees.delete(callRef))
  }

  /** Who answers calls to our numbers (the calls feature). */
  onIncoming(handler: (call: IncomingCall) => Promise<IncomingAnswer>): void {
    this.incoming = handler
  }

  /**
   * The sandbox network rings our number `to` from `from` (console `POST /console/sandbox/calls`):
   * answered, the caller hangs up after `hangupAfterMs` (default as for a sandbox phone); not
   * answered (no agent takes calls there, or every line is busy), it ends at once.
   */
  async ring(input: { from: string; to: string; lines?: string[]; hangupAfterMs?: number | null }): Promise<{ callRef: string; answered: boolean }> {
    const callRef = this.newRef()
    const at = this.clock.now()
    const answer = this.incoming ? await this.incoming({ from: input.from, to: input.to, callRef, at }) : null
    if (!answer) return { callRef, answered: false }
    this.active.add(callRef)
    this.pickUp(callRef, answer.callId, answer.attempt, input.lines ?? [])
    const after = input.hangupAfterMs === undefined ? DEFAULT_PHONE.hangupAfterMs : input.hangupAfterMs
    if (after !== null) this.schedule(callRef, at + after, () => this.calleeHangsUp({ callId: answer.callId, attempt: answer.attempt, callRef }, at + after, after))
    return { callRef, answered: true }
  }

  async place(request: PlaceRequest): Promise<Placed> {
    const caller = this.callers.get(request.callId)
    this.callers.delete(request.callId)
    const phone: SandboxPhone = caller ? { pickup: 'answer', ringMs: 0, lines: caller.lines, hangupAfterMs: null } : await this.phone(request.to)
    if (phone.pickup === 'refuse') throw new PlacementRefused(`the sandbox network refused to place a call to ${request.to} (its phone is set to refuse)`)
    const callRef = this.newRef()
    this.active.add(callRef)
    const ref = { callId: request.callId, attempt: request.attempt, callRef }
    const rang = this.clock.now() + phone.ringMs
    this.schedule(callRef, rang, async () => {
      const machine = phone.pickup === 'voicemail'
      // A machine is told apart on pickup and the try missed, unless the agent leaves it a message.
      const answered = phone.pickup === 'answer' || (machine && (!request.detectMachines || request.leaveVoicemail === true))
      if (!answered) {
        this.forget(callRef)
        const hangup = phone.pickup === 'reject' ? 'rejected' : phone.pickup
        await this.tell({ ...ref, type: 'unanswered', hangup: hangup as Exclude<SandboxPickup, 'answer' | 'reject' | 'refuse'>, at: rang })
        return
      }
      const after = phone.hangupAfterMs
      if (after !== null) this.schedule(callRef, rang + after, () => this.calleeHangsUp(ref, rang + after, after))
      await this.tell({ ...ref, type: 'answered', at: rang })
      const verdict = request.detectMachines && request.leaveVoicemail === true
      // The network's answering-machine detection: a person at once, a machine once its beep has played.
      if (verdict && !machine) await this.tell({ ...ref, type: 'answeredBy', by: 'human', at: rang })
      const greeting = phone.lines[0] ?? `Hello, you have reached the voicemail of ${request.to}. Please leave a message after the tone.`
      const beeped = () => void (verdict && this.active.has(callRef) ? this.tell({ ...ref, type: 'answeredBy', by: 'machine', at: this.clock.now() }) : undefined)
      this.pickUp(callRef, request.callId, request.attempt, machine ? phone.lines.slice(1) : phone.lines, machine ? { greeting, beeped } : undefined, caller?.more, caller?.clips)
      if (caller) await this.calleeHangsUp(ref, rang, caller.limitMs)
    })
    return { callRef }
  }

  /**
   * The callee's hang-up fell due on the service clock. A scripted callee still talking finishes
   * first (docs/api/calls.md, the sandbox network): it hangs up once it has said its lines and heard the
   * answer to the last, or once `afterMs` of real time has passed since it answered. Its audio is
   * real time, so a manual clock moved ahead does not cut it off; under the system clock both
   * bounds fall together and a long script is cut at `afterMs`, as before.
   */
  private async calleeHangsUp(ref: { callId: string; attempt: number; callRef: string }, due: number, afterMs: number): Promise<void> {
    const end = async (at: number) => {
      if (!this.active.has(ref.callRef)) return
      this.forget(ref.callRef)
      await this.tell({ ...ref, type: 'ended', hangup: 'answered', at })
    }
    const callee = this.callees.get(ref.callRef)
    if (!callee || callee.scriptDone()) return end(due)
    callee.hangUpWhenDone(afterMs, () => void end(Math.max(due, this.clock.now())))
  }

  /** Transfers (sandbox-transfers.ts), switched through this network's calls, clock and events. */
  private readonly switched = new SandboxTransfers({
    now: () => this.clock.now(),
    isLive: (ref) => this.active.has(ref),
    open: (ref) => this.active.add(ref),
    newRef: () => this.newRef(),
    phone: (number) => this.phone(number),
    agentLeaves: (callRef) => {
      this.callees.get(callRef)?.close()
      this.callees.delete(callRef)
    },
    schedule: (ref, at, run) => this.schedule(ref, at, run),
    forget: (ref) => this.forget(ref),
    tell: (event) => this.tell(event),
  })

  /** What each transferred call's person did, by call reference (tests read it); `heard`: a warm transfer's brief. */
  get transfers(): ReadonlyMap<string, TransferLog> {
    return this.switched.log
  }

  transfer(request: TransferRequest): Promise<void> {
    return this.switched.cold(request)
  }

  warmTransfer(request: WarmTransferRequest): Promise<{ legRef: string }> {
    return this.switched.warm(request)
  }

  joinTransfer(request: JoinRequest): Promise<void> {
    return this.switched.join(request)
  }

  /** The simulated network's callees carry the media token in the socket's path: there is no signature. */
  mediaUpgradeRefusal(_url: string, _headers: Headers): string | null {
    return null
  }

  /** The simulated network stands in for any carrier: an account has nothing to be checked against. */
  async verifyAccount(_account: CarrierAccount): Promise<void> {}

  async hangUp(callRef: string, _answered = true): Promise<void> {
    this.forget(callRef)
  }

  /** The callee's media stream closed, not by the callee (see the top of this file). */
  private async streamClosed(ref: { callId: string; attempt: number; callRef: string }, code: number): Promise<void> {
    if (!this.active.has(ref.callRef)) return
    if (code === NORMAL_CLOSURE) return this.forget(ref.callRef)
    if (code !== ABNORMAL_CLOSURE) return
    this.forget(ref.callRef)
    await this.tell({ ...ref, type: 'ended', hangup: 'failed', error: 'the call was dropped: its media stream was cut (the service instance holding it stopped)', at: this.clock.now() })
  }

  /** Runs what fell due by `now` (the manual clock's advance hook), in time order. */
  async due(now: number): Promise<void> {
    for (;;) {
      const next = this.pending.filter((p) => p.at <= now).sort((a, b) => a.at - b.at)[0]
      if (!next) return
      await this.fire(next)
    }
  }

  private schedule(callRef: string, at: number, run: () => Promise<void>): void {
    const entry = { callRef, at, run }
    if (this.clock.kind === 'manual') {
      this.pending.push(entry)
      // Due already (no ring): it runs once the placement has answered, without waiting for the clock.
      if (at <= this.clock.now()) setTimeout(() => void this.fire(entry), 0)
      return
    }
    const timer = setTimeout(() => void this.fire(entry), Math.max(0, at - this.clock.now()))
    this.timers.set(callRef, [...(this.timers.get(callRef) ?? []), timer])
  }

  /** Runs a scheduled moment once, unless its call was hung up meanwhile; resolves when its listeners have. */
  private async fire(entry: Pending): Promise<void> {
    if (this.clock.kind === 'manual') {
      if (!this.pending.includes(entry)) return
      this.pending = this.pending.filter((p) => p !== entry)
    }
    if (!this.active.has(entry.callRef)) return
    await entry.run()
  }

  private forget(callRef: string): void {
    // Hanging a caller up lets their warm transfer's waiting leg go too.
    const leg = this.switched.releaseLeg(callRef)
    if (leg) this.forget(leg)
    this.active.delete(callRef)
    this.callees.get(callRef)?.close()
    this.callees.delete(callRef)
    this.pending = this.pending.filter((p) => p.callRef !== callRef)
    for (const t of this.timers.get(callRef) ?? []) clearTimeout(t)
    this.timers.delete(callRef)
  }

  private async tell(event: TelephonyEvent): Promise<void> {
    // A listener's failure is its own to log; the network goes on.
    await Promise.all(this.listeners.map((listener) => Promise.resolve(listener(event)).catch(() => {})))
  }
}
