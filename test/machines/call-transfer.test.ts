/**
 * The call chart's transfer (machines/call-transfer.ts), transition by transition on the shared
 * harness (call-harness.ts): cold `transferring` → `transferred`, warm `consulting` → `joining` →
 * `transferred` or back to `connected`, and the call's end in each. Transfer states are states, not
 * flags; the call's status stays `connected` in all of them.
 */
import { describe, expect } from 'bun:test'
import { fromPromise } from 'xstate'
import { EffectError } from '../../actors/effects'
import type { CallEvent } from '../../machines/call'
import {
  accepted,
  answered,
  BILLING,
  BOOKED,
  del,
  due,
  ended,
  h,
  heldJoin,
  heldTransfer,
  legAnswers,
  legPlaced,
  MANAGER,
  mediaEnded,
  personAnswers,
  refusedTransfer,
  transfer,
  warm,
} from './call-harness'
import { type Row, transitions } from './table'

const toJoining = { via: [due(), answered(), warm(), legAnswers(), accepted()], fakes: heldJoin }
const toTransferring = { via: [due(), answered(), transfer(BOOKED + 20_000, 'api')], fakes: heldTransfer }

const rows: Row<CallEvent>[] = [
  // Transfer (docs/api/calls.md "Transfer"): states, not flags; the status stays connected.
  {
    from: 'connected',
    event: transfer(),
    condition: 'the agent (or the API) asks; the network takes the hand-off',
    to: 'transferred',
    through: ['transferring'],
    also: ['transferCall'],
    fakes: (log) => ({
      transferCall: fromPromise(async () => {
        log.push('transferCall')
        return { at: BOOKED + 20_400 }
      }),
    }),
    context: { transfer: { ...BILLING, by: 'agent', requestedAt: BOOKED + 20_000, startedAt: BOOKED + 20_400, answeredAt: null, endedAt: null, outcome: null, seconds: 0, error: null } },
  },
  {
    from: 'connected',
    event: transfer(BOOKED + 20_000, 'api'),
    condition: 'the network refuses the hand-off: the agent carries on',
    to: 'connected',
    also: ['transferCall', 'emit:call.transfer_ended'],
    fakes: refusedTransfer,
    context: {
      transfer: {
        ...BILLING,
        by: 'api',
        requestedAt: BOOKED + 20_000,
        startedAt: null,
        answeredAt: null,
        endedAt: BOOKED + 20_500,
        outcome: 'failed',
        seconds: 0,
        error: 'Twilio would not transfer the call: HTTP 400',
      },
    },
  },
  {
    from: 'transferring',
    event: personAnswers(),
    condition: "the person's answer arrives before the hand-off's own answer",
    to: 'transferred',
    via: [due(), answered(), transfer()],
    fakes: heldTransfer,
    context: { transfer: expect.objectContaining({ answeredAt: BOOKED + 25_000, outcome: null }) },
  },
  // Warm: the person is called first and told who is waiting; the caller stays with the agent.
  {
    from: 'connected',
    event: warm(),
    condition: "a warm transfer: the network places the person's leg",
    to: 'consulting',
    also: ['transferCall'],
    fakes: legPlaced,
    context: {
      transfer: { ...MANAGER, by: 'agent', requestedAt: BOOKED + 20_000, startedAt: BOOKED + 20_400, answeredAt: null, endedAt: null, outcome: null, seconds: 0, error: null, legRef: 'CA-leg' },
    },
  },
  {
    from: 'connected',
    event: warm(),
    condition: "the network will not place the person's leg: the agent carries on",
    to: 'connected',
    also: ['transferCall', 'emit:call.transfer_ended'],
    fakes: refusedTransfer,
    context: { transfer: expect.objectContaining({ mode: 'warm', outcome: 'failed', error: 'Twilio would not transfer the call: HTTP 400' }) },
  },
  {
    from: 'consulting',
    event: legAnswers(),
    condition: 'the person picks up and hears the brief',
    to: 'consulting',
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ answeredAt: BOOKED + 25_000, outcome: null }) },
  },
  {
    from: 'consulting',
    event: accepted(),
    condition: 'the person takes the call: the network joins the two',
    to: 'transferred',
    through: ['joining'],
    also: ['joinTransfer'],
    via: [due(), answered(), warm(), legAnswers()],
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ answeredAt: BOOKED + 25_000, outcome: null, legRef: 'CA-leg' }) },
  },
  {
    from: 'consulting',
    event: { type: 'transfer.ended', at: BOOKED + 50_000, outcome: 'no_answer' },
    condition: 'nobody answers: back to the agent',
    to: 'connected',
    also: ['emit:call.transfer_ended'],
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ outcome: 'no_answer', seconds: 0, endedAt: BOOKED + 50_000 }), endedAt: null },
  },
  {
    from: 'consulting',
    event: { type: 'transfer.ended', at: BOOKED + 37_000, outcome: 'answered', seconds: 12 },
    condition: 'the person heard the brief and hung up: declined, the leg billed, back to the agent',
    to: 'connected',
    also: ['emit:call.transfer_ended'],
    via: [due(), answered(), warm(), legAnswers()],
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ outcome: 'declined', seconds: 12, answeredAt: BOOKED + 25_000 }) },
  },
  {
    from: 'consulting',
    event: { type: 'transfer.ended', at: BOOKED + 33_000, outcome: 'declined' },
    condition: 'the person did not press the key: declined, seconds from their answer',
    to: 'connected',
    also: ['emit:call.transfer_ended'],
    via: [due(), answered(), warm(), legAnswers()],
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ outcome: 'declined', seconds: 8 }) },
  },
  {
    from: 'consulting',
    event: mediaEnded(BOOKED + 30_000),
    condition: "the caller hangs up on hold (our stream is still theirs): the call ends, the person's leg is let go",
    to: 'completed',
    also: ['emit:call.transfer_ended', 'endLeg', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    via: [due(), answered(), warm(), legAnswers()],
    fakes: legPlaced,
    context: { hangup: 'answered', transfer: expect.objectContaining({ outcome: 'failed', seconds: 5, error: 'the caller left before the person was connected' }) },
  },
  {
    from: 'consulting',
    event: del(BOOKED + 30_000),
    condition: 'DELETE while the person is called',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'hangUp', 'endLeg', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    fakes: legPlaced,
    context: { hangup: 'cancelled', transfer: expect.objectContaining({ outcome: 'failed' }) },
  },
  {
    from: 'consulting',
    event: accepted(),
    condition: "the network will not join them: the person's leg is let go, the agent carries on",
    to: 'connected',
    through: ['joining'],
    also: ['joinTransfer', 'emit:call.transfer_ended', 'endLeg'],
    via: [due(), answered(), warm(), legAnswers()],
    fakes: (log) => ({
      ...legPlaced(log),
      joinTransfer: fromPromise(async () => {
        log.push('joinTransfer')
        throw new EffectError('Twilio would not join the call: Call is not in-progress', BOOKED + 36_000)
      }),
    }),
    context: { transfer: expect.objectContaining({ outcome: 'failed', seconds: 11, error: 'Twilio would not join the call: Call is not in-progress' }) },
  },
  {
    from: 'joining',
    event: ended(BOOKED + 40_000),
    condition: 'the caller hangs up while being joined: the person waiting is let go',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'endLeg', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    via: [due(), answered(), warm(), legAnswers(), accepted()],
    fakes: heldJoin,
    context: { transfer: expect.objectContaining({ outcome: 'failed', seconds: 15 }) },
  },
  {
    from: 'transferred',
    event: { type: 'transfer.ended', at: BOOKED + 95_000, outcome: 'answered' },
    condition: "warm, joined: the person's leg ends, billed from their answer (the brief included)",
    to: 'transferred',
    also: ['emit:call.transfer_ended'],
    via: [due(), answered(), warm(), legAnswers(), accepted()],
    fakes: legPlaced,
    context: { transfer: expect.objectContaining({ mode: 'warm', outcome: 'answered', seconds: 70 }) },
  },
  { from: 'transferred', event: personAnswers(), condition: 'the person picks up', to: 'transferred', context: { transfer: expect.objectContaining({ answeredAt: BOOKED + 25_000 }) } },
  {
    from: 'transferred',
    event: { type: 'transfer.ended', at: BOOKED + 67_000, outcome: 'answered', seconds: 42 },
    condition: "the person's leg is over",
    to: 'transferred',
    also: ['emit:call.transfer_ended'],
    via: [due(), answered(), transfer(), personAnswers()],
    context: { transfer: expect.objectContaining({ outcome: 'answered', seconds: 42, endedAt: BOOKED + 67_000, answeredAt: BOOKED + 25_000 }) },
  },
  {
    from: 'transferred',
    event: { type: 'transfer.ended', at: BOOKED + 50_000, outcome: 'no_answer' },
    condition: 'nobody answers',
    to: 'transferred',
    also: ['emit:call.transfer_ended'],
    context: { transfer: expect.objectContaining({ outcome: 'no_answer', seconds: 0, answeredAt: null }) },
  },
  {
    from: 'transferred',
    event: ended(BOOKED + 67_000),
    condition: 'the network ends the call after the leg was reported: hangup answered',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    via: [due(), answered(), transfer(), personAnswers(), { type: 'transfer.ended', at: BOOKED + 67_000, outcome: 'answered', seconds: 42 }],
    context: { hangup: 'answered', seconds: 62, transfer: expect.objectContaining({ outcome: 'answered', seconds: 42 }) },
  },
  {
    from: 'transferred',
    event: ended(BOOKED + 65_000),
    condition: 'the network ends the call with the leg unreported: the transfer closes with it',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    via: [due(), answered(), transfer(), personAnswers()],
    context: { hangup: 'answered', transfer: expect.objectContaining({ outcome: 'answered', seconds: 40, endedAt: BOOKED + 65_000 }) },
  },
  {
    from: 'transferred',
    event: del(BOOKED + 30_000),
    condition: 'DELETE while the caller rings the person',
    to: 'completed',
    also: ['emit:call.transfer_ended', 'hangUp', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    context: { hangup: 'cancelled', transfer: expect.objectContaining({ outcome: 'failed', error: 'the call ended before the transfer connected' }) },
  },
  // The ends of a call while the hand-off or the join is still under way, and a leg reported over
  // before the effect that placed it answered.
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
    condition: "the person hangs up as they are joined: the leg is over, the caller's end follows from the network",
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
    event: ended(BOOKED + 26_000),
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
