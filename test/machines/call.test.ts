import { describe, expect, test } from 'bun:test'
import { fromPromise } from 'xstate'
import { EffectError } from '../../actors/effects'
import { type CallEvent, callDeadlines, canApply } from '../../machines/call'
import { accepted, answered, BOOKED, booked, del, due, ended, h, heldJoin, heldTransfer, legAnswers, MIN, mediaEnded, RETRY_AT, T0, transfer, unanswered, warm, withRetry } from './call-harness'
import { expectInert, type RefusedRow, type Row, reach, reachSettled, refusals, restore, roundTrips, starts, transitions } from './table'

describe('call: created', () => {
  starts(h, [
    { name: 'POST calls accepted', input: { id: 'out_1', at: T0 }, to: 'ringing', also: ['placeCall', 'openConversation'], context: { attempt: 1, startedAt: T0, scheduledFor: null } },
    {
      name: 'an inbound call answered by the agent',
      input: { id: 'in_1', at: T0, inbound: true, callRef: 'CA1' },
      to: 'connected',
      also: [],
      context: { attempt: 1, startedAt: T0, answeredAt: T0, inbound: true, callRef: 'CA1' },
    },
    { name: 'POST calls with a time', input: booked, to: 'scheduled', also: [], context: { attempt: 1, startedAt: null, scheduledFor: BOOKED } },
    {
      name: 'a try stored without its actor before a crash',
      input: { id: 'out_2', at: T0, scheduledFor: BOOKED, unplaced: 'not placed: the service stopped' },
      to: 'failed',
      also: ['emit:call.analysed'],
      context: { startedAt: T0, endedAt: T0, analysedAt: T0, hangup: 'not_placed', error: 'not placed: the service stopped' },
    },
  ])
})

// docs/spec.md "Call status", row by row, then the rows it implies.
const rows: Row<CallEvent>[] = [
  { from: 'scheduled', event: due(), condition: 'time arrives, call rings', to: 'ringing', also: ['placeCall', 'openConversation'], context: { id: 'sch_1', attempt: 1, startedAt: BOOKED } },
  { from: 'scheduled', event: del(T0 + MIN), condition: 'waiting to ring (booked)', to: 'cancelled', also: [], context: { hangup: 'cancelled', endedAt: T0 + MIN } },
  {
    from: 'scheduled',
    event: del(RETRY_AT - MIN),
    condition: 'waiting to ring (a retry)',
    to: 'cancelled',
    also: [],
    input: withRetry(2),
    via: [due(), unanswered()],
    context: { hangup: 'cancelled', attempt: 1, retryScheduledFor: null },
  },
  {
    from: 'scheduled',
    event: { type: 'contact.optedOut', at: T0 + MIN },
    condition: 'customer opts out before ringing',
    to: 'cancelled',
    also: ['emit:call.analysed'],
    context: { hangup: 'not_placed', error: 'the person opted out before the call rang', analysedAt: T0 + MIN },
  },
  {
    from: 'scheduled',
    event: { type: 'contact.optedOut', at: T0 + MIN, reason: 'do_not_call' },
    condition: 'number put on do-not-call list',
    to: 'cancelled',
    also: ['emit:call.analysed'],
    context: { hangup: 'not_placed', error: 'the number was put on the do-not-call list before the call rang' },
  },
  {
    from: 'scheduled',
    event: { type: 'contact.optedOut', at: RETRY_AT - MIN },
    condition: 'opts out while a retry waits',
    to: 'cancelled',
    also: ['emit:call.analysed'],
    input: withRetry(2),
    via: [due(), unanswered()],
    context: { hangup: 'not_placed', retryScheduledFor: null },
  },
  {
    from: 'scheduled',
    event: { type: 'call.unplaceable', at: BOOKED, error: 'no number left to call from' },
    condition: 'queued try can never be placed',
    to: 'failed',
    also: ['emit:call.analysed'],
    context: { hangup: 'not_placed', error: 'no number left to call from' },
  },
  { from: 'ringing', event: del(), condition: 'live', to: 'cancelled', also: ['hangUp', 'emit:call.analysed'], context: { hangup: 'cancelled', endedAt: BOOKED + 10_000 } },
  {
    from: 'ringing',
    event: del(),
    condition: 'live, retries remain: no retry follows',
    to: 'cancelled',
    also: ['hangUp', 'emit:call.analysed'],
    input: withRetry(3),
    context: { retryScheduledFor: null, attempt: 1 },
  },
  {
    from: 'connected',
    event: del(BOOKED + 45_000),
    condition: 'live',
    to: 'completed',
    also: ['hangUp', 'emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    context: { hangup: 'cancelled', seconds: 40, analysedAt: BOOKED + 45_000 },
  },
  {
    from: 'ringing',
    event: unanswered('no_answer'),
    condition: 'nobody picks up, no retry',
    to: 'missed',
    also: ['emit:call.analysed'],
    context: { hangup: 'no_answer', retryScheduledFor: null, seconds: 0, analysedAt: BOOKED + 30_000 },
  },
  { from: 'ringing', event: unanswered('busy'), condition: 'busy', to: 'missed', also: ['emit:call.analysed'], context: { hangup: 'busy' } },
  { from: 'ringing', event: unanswered('rejected'), condition: 'rejected', to: 'missed', also: ['emit:call.analysed'], context: { hangup: 'rejected' } },
  { from: 'ringing', event: unanswered('unreachable'), condition: 'unreachable', to: 'missed', also: ['emit:call.analysed'], context: { hangup: 'unreachable' } },
  { from: 'ringing', event: unanswered('voicemail'), condition: 'answering machine detected', to: 'missed', also: ['emit:call.analysed'], context: { hangup: 'voicemail' } },
  {
    from: 'ringing',
    event: unanswered(),
    condition: 'nobody picks up, a retry remains',
    to: 'scheduled',
    also: ['emit:call.analysed'],
    input: withRetry(2),
    context: { attempt: 1, hangup: 'no_answer', retryScheduledFor: RETRY_AT },
  },
  {
    from: 'scheduled',
    event: due(RETRY_AT),
    condition: 'retry time arrives',
    to: 'ringing',
    also: ['placeCall', 'openConversation'],
    input: withRetry(2),
    via: [due(), unanswered()],
    context: { id: 'sch_1', attempt: 2, retryScheduledFor: null, hangup: null, startedAt: RETRY_AT },
  },
  {
    from: 'ringing',
    event: unanswered('busy', RETRY_AT + 20_000),
    condition: 'last try missed',
    to: 'missed',
    also: ['emit:call.analysed'],
    input: withRetry(2),
    via: [due(), unanswered(), due(RETRY_AT)],
    context: { attempt: 2, hangup: 'busy', retryScheduledFor: null },
  },
  {
    from: 'ringing',
    event: { type: 'call.refused', at: BOOKED, error: 'no balance' },
    condition: 'provider refuses the call',
    to: 'failed',
    also: ['emit:call.analysed'],
    context: { hangup: 'failed', error: 'no balance' },
  },
  {
    from: 'ringing',
    event: { type: 'call.refused', at: BOOKED, error: 'bad number' },
    condition: 'refused with retries left: not retried',
    to: 'failed',
    also: ['emit:call.analysed'],
    input: withRetry(3),
    context: { retryScheduledFor: null },
  },
  { from: 'ringing', event: answered(), condition: 'customer answers', to: 'connected', context: { answeredAt: BOOKED + 5_000 } },
  { from: 'ringing', event: { type: 'call.placed', at: BOOKED, callRef: 'CA123' }, condition: 'provider accepted the dial', to: 'ringing', context: { callRef: 'CA123' } },
  {
    from: 'connected',
    event: ended(),
    condition: 'call ends',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    context: { hangup: 'answered', seconds: 60, endedAt: BOOKED + 65_000, analysedAt: BOOKED + 65_000 },
  },
  {
    from: 'connected',
    event: { type: 'call.ended', at: BOOKED + 7_000, hangup: 'before_agent' },
    condition: 'customer hangs up before the agent speaks',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    context: { hangup: 'before_agent', seconds: 2 },
  },
  {
    from: 'connected',
    event: { type: 'call.ended', at: BOOKED + 25_000, hangup: 'voicemail' },
    condition: 'a machine answered; the agent left its message after the beep and hung up',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    context: { hangup: 'voicemail', seconds: 20, endedAt: BOOKED + 25_000 },
  },
  {
    from: 'connected',
    event: ended(),
    condition: 'summary and fields written: final at the instant the analysis reports',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    fakes: (log) => ({
      analyseCall: fromPromise(async () => {
        log.push('analyseCall')
        return { at: BOOKED + 70_000 }
      }),
    }),
    context: { analysedAt: BOOKED + 70_000 },
  },
  {
    from: 'connected',
    event: ended(),
    condition: 'analysis gave up: results final as they stand',
    to: 'completed',
    also: ['emit:call.completed', 'analyseCall', 'emit:call.analysed'],
    fakes: (log) => ({
      analyseCall: fromPromise(async () => {
        log.push('analyseCall')
        throw new EffectError('model down', BOOKED + 90_000)
      }),
    }),
    context: { analysedAt: BOOKED + 90_000 },
  },
  {
    from: 'scheduled',
    event: due(),
    condition: 'the provider will not place it (POST answers 502)',
    to: 'failed',
    also: ['placeCall', 'openConversation', 'emit:call.analysed'],
    fakes: (log) => ({
      placeCall: fromPromise(async () => {
        log.push('placeCall')
        throw new EffectError('unverified destination', BOOKED + 1)
      }),
    }),
    context: { hangup: 'failed', error: 'unverified destination', endedAt: BOOKED + 1, analysedAt: BOOKED + 1 },
  },
  {
    from: 'scheduled',
    event: due(),
    condition: 'queued try can never be placed (its agent or number went)',
    to: 'failed',
    also: ['placeCall', 'openConversation', 'emit:call.analysed'],
    fakes: (log) => ({
      placeCall: fromPromise(async () => {
        log.push('placeCall')
        throw new EffectError('agent Ava was deleted before the call rang', BOOKED + 1, 'not_placed')
      }),
    }),
    context: { hangup: 'not_placed', error: 'agent Ava was deleted before the call rang' },
  },
  {
    from: 'scheduled',
    event: due(),
    condition: 'the provider placed it: its reference is kept',
    to: 'ringing',
    also: ['placeCall', 'openConversation'],
    fakes: (log) => ({
      placeCall: fromPromise(async () => {
        log.push('placeCall')
        return { callRef: 'CA9' }
      }),
    }),
    context: { callRef: 'CA9' },
  },
]

const refused: RefusedRow<CallEvent>[] = [
  { from: 'completed', event: del(BOOKED + 99_000), condition: 'already ended', says: 'already ended' },
  { from: 'missed', event: del(BOOKED + 99_000), condition: 'already ended' },
  { from: 'missed', event: del(RETRY_AT + 99_000), condition: 'every try used', input: withRetry(2), via: [due(), unanswered(), due(RETRY_AT), unanswered('no_answer', RETRY_AT + 30_000)] },
  { from: 'failed', event: del(BOOKED + 99_000), condition: 'already ended' },
  { from: 'cancelled', event: del(BOOKED + 99_000), condition: 'already ended' },
]

describe('call: transitions', () => transitions(h, rows))
describe('call: refused moves', () => refusals(h, refused))

describe('call: timers are idempotent', () => {
  test('an early wake-up does nothing', () => expectInert(reach(h, 'scheduled'), due(BOOKED - 1)))
  test('a duplicate wake-up after it rang does nothing', () => {
    const s = reach(h, 'scheduled')
    s.actor.send(due())
    expect(s.log).toEqual(['placeCall', 'openConversation'])
    s.log.length = 0
    expectInert(s, due())
  })
  test("the first try's timer, redelivered while a retry waits, does nothing", () => {
    expectInert(reach(h, 'scheduled', { input: withRetry(2), via: [due(), unanswered()] }), due(BOOKED))
  })
  for (const state of ['connected', 'completed', 'missed', 'failed', 'cancelled']) {
    test(`a wake-up in ${state} does nothing`, () => expectInert(reach(h, state), due(BOOKED + 999_999)))
  }
  test('a late call.ended after the analysis does nothing', async () => {
    expectInert(await reachSettled(h, 'completed'), ended(BOOKED + 99_000))
  })
  test("the media stream's end is not the call's end once it is handed off", async () => {
    expectInert(await reachSettled(h, 'transferring', { via: [due(), answered(), transfer()], fakes: heldTransfer }), mediaEnded())
    expectInert(await reachSettled(h, 'transferred'), mediaEnded())
    expectInert(await reachSettled(h, 'joining', { via: [due(), answered(), warm(), legAnswers(), accepted()], fakes: heldJoin }), mediaEnded())
  })
  test('a late provider report after DELETE does nothing', () => {
    expectInert(reach(h, 'cancelled', { via: [due(), del()] }), answered(BOOKED + 20_000))
  })
})

describe('call: snapshots', () => {
  roundTrips(h)
  test('a restored retry wait still rings on its timer', () => {
    const { actor } = reach(h, 'scheduled', { input: withRetry(2), via: [due(), unanswered()] })
    const restored = restore(h, actor)
    restored.send(due(RETRY_AT))
    expect(restored.getSnapshot().value).toBe('ringing')
    expect(restored.getSnapshot().context.attempt).toBe(2)
  })
})

describe('call: deadlines', () => {
  test('a waiting call has one durable deadline, at its booked time or its retry', async () => {
    expect(callDeadlines((await reachSettled(h, 'scheduled')).actor.getSnapshot())).toEqual([{ name: 'ring', at: BOOKED }])
    const retry = await reachSettled(h, 'scheduled', { input: withRetry(2), via: [due(), unanswered()] })
    expect(callDeadlines(retry.actor.getSnapshot())).toEqual([{ name: 'ring', at: RETRY_AT }])
    for (const state of ['ringing', 'connected', 'consulting', 'transferred', 'completed', 'missed', 'failed', 'cancelled']) {
      expect(callDeadlines((await reachSettled(h, state)).actor.getSnapshot())).toEqual([])
    }
  })
})

describe('call: canApply', () => {
  test('a transfer applies only to a connected call (once it is handed off, not again)', async () => {
    for (const state of ['ringing', 'consulting', 'transferred', 'completed', 'missed']) {
      expect(canApply((await reachSettled(h, state)).actor.getSnapshot(), transfer(BOOKED + 40_000))).toEqual({ ok: false, state, message: `transfer.request does not apply while ${state}` })
    }
    expect(canApply((await reachSettled(h, 'connected')).actor.getSnapshot(), transfer())).toEqual({ ok: true })
  })
  test('DELETE applies while waiting or live', () => {
    for (const s of ['scheduled', 'ringing', 'connected'] as const) expect(canApply(s, 'call.delete')).toEqual({ ok: true })
  })
  test('a provider event that does not apply names the state', () => {
    expect(canApply('scheduled', 'call.answered')).toEqual({ ok: false, state: 'scheduled', message: 'call.answered does not apply while scheduled' })
  })
})
