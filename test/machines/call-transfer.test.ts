/**
 * The call chart's transfer transitions that call.test.ts's table leaves out (machines/call-transfer.ts):
 * the ends of a call while the hand-off or the join is still under way, and a leg reported over
 * before the effect that placed it answered. Same harness and table as call.test.ts.
 */
import { describe, expect } from 'bun:test'
import { fromPromise } from 'xstate'
import { CALL_EFFECTS, type CallEvent, type CallInput, callMachine, canApply } from '../../machines/call'
import { type Harness, type Row, transitions } from './table'

const BOOKED = Date.UTC(2025, 0, 6, 10, 0, 0)
const booked: CallInput = { id: 'sch_1', at: BOOKED - 60_000, scheduledFor: BOOKED }
const due: CallEvent = { type: 'timer.due', at: BOOKED }
const answered: CallEvent = { type: 'call.answered', at: BOOKED + 5_000 }
const BILLING = { name: 'Billing', phoneNumber: '+14155550199', mode: 'cold' as const }
const MANAGER = { name: 'Manager', phoneNumber: '+14155550198', mode: 'warm' as const }
const cold: CallEvent = { type: 'transfer.request', at: BOOKED + 20_000, destination: BILLING, by: 'api' }
const warm: CallEvent = { type: 'transfer.request', at: BOOKED + 20_000, destination: MANAGER, by: 'agent' }
const legAnswers: CallEvent = { type: 'transfer.answered', at: BOOKED + 25_000, legRef: 'CA-leg' }
const accepted: CallEvent = { type: 'transfer.accepted', at: BOOKED + 35_000, legRef: 'CA-leg' }
const networkEnd = (at: number): CallEvent => ({ type: 'call.ended', at })
const del = (at: number): CallEvent => ({ type: 'call.delete', at })

const held = (name: string) => (log: string[]) => ({
  [name]: fromPromise(async () => {
    log.push(name)
    await new Promise(() => {})
  }),
})
/** The warm leg is placed as CA-leg; the join never answers, so the call stays `joining`. */
const heldJoin = (log: string[]) => ({
  transferCall: fromPromise(async () => {
    log.push('transferCall')
    return { at: BOOKED + 20_400, legRef: 'CA-leg' }
  }),
  ...held('joinTransfer')(log),
})

const h: Harness<CallEvent> = {
  machine: callMachine,
  effects: CALL_EFFECTS,
  invokes: CALL_EFFECTS,
  input: booked,
  canApply,
  paths: { transferring: [due, answered, cold], joining: [due, answered, warm, legAnswers, accepted] },
}
const toJoining = { via: [due, answered, warm, legAnswers, accepted], fakes: heldJoin }
const toTransferring = { via: [due, answered, cold], fakes: held('transferCall') }

const rows: Row<CallEvent>[] = [
  {
    from: 'joining',
    event: del(BOOKED + 40_000),
    condition: 'DELETE while the two are joined: the caller is hung up and the person waiting let go',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'hangUp', 'endLeg', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    ...toJoining,
    context: { hangup: 'cancelled', transfer: expect.objectContaining({ outcome: 'failed', seconds: 15, error: 'the caller left before the person was connected' }) },
  },
  {
    from: 'joining',
    event: { type: 'transfer.ended', at: BOOKED + 38_000, outcome: 'answered', seconds: 13 },
    condition: 'the person hangs up as they are joined: the leg is over, the caller’s end follows from the network',
    to: 'transferred',
    also: ['emit:call.transfer_ended'],
    ...toJoining,
    context: { transfer: expect.objectContaining({ outcome: 'answered', seconds: 13, endedAt: BOOKED + 38_000 }) },
  },
  {
    from: 'transferring',
    event: { type: 'transfer.ended', at: BOOKED + 50_000, outcome: 'no_answer' },
    condition: "nobody answered, reported before the hand-off's own answer",
    to: 'transferred',
    also: ['emit:call.transfer_ended'],
    ...toTransferring,
    context: { transfer: expect.objectContaining({ outcome: 'no_answer', seconds: 0, answeredAt: null, endedAt: BOOKED + 50_000 }) },
  },
  {
    from: 'transferring',
    event: networkEnd(BOOKED + 26_000),
    condition: 'the network ends the call during the hand-off: the open transfer closes with it',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    ...toTransferring,
    context: { hangup: 'answered', transfer: expect.objectContaining({ outcome: 'failed', error: 'the call ended before the transfer connected' }) },
  },
  {
    from: 'transferring',
    event: del(BOOKED + 22_000),
    condition: 'DELETE during the hand-off',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'hangUp', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    ...toTransferring,
    context: { hangup: 'cancelled', transfer: expect.objectContaining({ outcome: 'failed' }) },
  },
]

describe('call: transfer transitions', () => transitions(h, rows))
