/**
 * The call chart's test harness (table.ts), shared by call.test.ts and call-transfer.test.ts: the
 * instants, the events that move a call, the effect fakes, and the paths to each state.
 */
import { fromPromise } from 'xstate'
import { EffectError } from '../../actors/effects'
import { CALL_EFFECTS, type CallEvent, type CallInput, callMachine, canApply } from '../../machines/call'
import type { Harness } from './table'

export const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
export const MIN = 60_000
export const BOOKED = T0 + 60 * MIN
export const RETRY_DELAY = 10 * MIN

export const booked: CallInput = { id: 'sch_1', at: T0, scheduledFor: BOOKED }
export const withRetry = (maxAttempts: number): CallInput => ({ ...booked, retry: { maxAttempts, delayMs: RETRY_DELAY } })

export const due = (at = BOOKED): CallEvent => ({ type: 'timer.due', at })
export const answered = (at = BOOKED + 5_000): CallEvent => ({ type: 'call.answered', at })
export const ended = (at = BOOKED + 65_000): CallEvent => ({ type: 'call.ended', at })
export const unanswered = (hangup: 'no_answer' | 'busy' | 'rejected' | 'unreachable' | 'voicemail' = 'no_answer', at = BOOKED + 30_000): CallEvent => ({ type: 'call.unanswered', at, hangup })
export const del = (at = BOOKED + 10_000): CallEvent => ({ type: 'call.delete', at })
export const RETRY_AT = BOOKED + 30_000 + RETRY_DELAY
export const BILLING = { name: 'Billing', phoneNumber: '+14155550199', mode: 'cold' as const }
export const transfer = (at = BOOKED + 20_000, by: 'agent' | 'api' = 'agent'): CallEvent => ({ type: 'transfer.request', at, destination: BILLING, by })
export const personAnswers = (at = BOOKED + 25_000): CallEvent => ({ type: 'transfer.answered', at })
export const mediaEnded = (at = BOOKED + 21_000): CallEvent => ({ type: 'call.ended', at, hangup: 'answered', source: 'media' })
export const MANAGER = { name: 'Manager', phoneNumber: '+14155550198', mode: 'warm' as const }
export const warm = (at = BOOKED + 20_000): CallEvent => ({ type: 'transfer.request', at, destination: MANAGER, by: 'agent' })
export const legAnswers = (at = BOOKED + 25_000): CallEvent => ({ type: 'transfer.answered', at, legRef: 'CA-leg' })
export const accepted = (at = BOOKED + 35_000): CallEvent => ({ type: 'transfer.accepted', at, legRef: 'CA-leg' })
/** The warm leg is placed at BOOKED + 20 400 as CA-leg. */
export const legPlaced = (log: string[]) => ({
  transferCall: fromPromise(async () => {
    log.push('transferCall')
    return { at: BOOKED + 20_400, legRef: 'CA-leg' }
  }),
})
/** The join never answers (held), so the call stays `joining`. */
export const heldJoin = (log: string[]) => ({
  ...legPlaced(log),
  joinTransfer: fromPromise(async () => {
    log.push('joinTransfer')
    await new Promise(() => {})
  }),
})
/** The network never answers the hand-off (held), so the call stays `transferring`. */
export const heldTransfer = (log: string[]) => ({
  transferCall: fromPromise(async () => {
    log.push('transferCall')
    await new Promise(() => {})
  }),
})
export const refusedTransfer = (log: string[]) => ({
  transferCall: fromPromise(async () => {
    log.push('transferCall')
    throw new EffectError('Twilio would not transfer the call: HTTP 400', BOOKED + 20_500)
  }),
})

export const h: Harness<CallEvent> = {
  machine: callMachine,
  effects: CALL_EFFECTS,
  invokes: CALL_EFFECTS,
  input: booked,
  canApply,
  paths: {
    scheduled: [],
    ringing: [due()],
    connected: [due(), answered()],
    completed: [due(), answered(), ended()],
    missed: [due(), unanswered()],
    failed: [due(), { type: 'call.refused', at: BOOKED, error: 'unverified destination' }],
    cancelled: [del()],
    transferred: [due(), answered(), transfer()],
    consulting: [due(), answered(), warm()],
  },
}
