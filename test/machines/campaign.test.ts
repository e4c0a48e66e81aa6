import { describe, expect, test } from 'bun:test'
import { CAMPAIGN_EFFECTS, type CampaignEvent, type CampaignState, campaignMachine, canApply } from '../../machines/campaign'
import { expectInert, type Harness, type RefusedRow, type Row, reach, refusals, roundTrips, starts, transitions } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const start: CampaignEvent = { type: 'campaign.start', at: T0 + 1 }
const pause: CampaignEvent = { type: 'campaign.pause', at: T0 + 2 }
const resume: CampaignEvent = { type: 'campaign.resume', at: T0 + 3 }
const cancel: CampaignEvent = { type: 'campaign.cancel', at: T0 + 4 }
const progress = (handled: number, at = T0 + 5): CampaignEvent => ({ type: 'campaign.progress', at, handled })
const failure: CampaignEvent = { type: 'campaign.failed', at: T0 + 6, error: 'template was paused by the messaging platform' }

const h: Harness<CampaignEvent> = {
  machine: campaignMachine,
  effects: CAMPAIGN_EFFECTS,
  invokes: CAMPAIGN_EFFECTS,
  input: { id: 'cmp_1', recipients: 3 },
  canApply,
  paths: {
    draft: [],
    sending: [start],
    paused: [start, pause],
    sent: [start, progress(3)],
    failed: [start, failure],
    cancelled: [cancel],
  },
}

describe('campaign: created', () => {
  starts(h, [{ name: 'created in the console', input: { id: 'cmp_1', recipients: 3 }, to: 'draft', context: { handled: 0, startedAt: null } }])
})

// docs/spec.md "Campaign status" rows, then the console start and the ends it leaves "not shown".
const rows: Row<CampaignEvent>[] = [
  { from: 'sending', event: pause, condition: 'POST pause', to: 'paused', also: [], context: { pausedAt: T0 + 2 } },
  { from: 'paused', event: resume, condition: 'POST resume', to: 'sending', also: ['sendRecipients'], context: { pausedAt: null } },
  { from: 'draft', event: cancel, condition: 'POST cancel', to: 'cancelled', also: ['emit:campaign.finished'], context: { finishedAt: T0 + 4 } },
  { from: 'sending', event: cancel, condition: 'POST cancel', to: 'cancelled', also: ['emit:campaign.finished'], context: { finishedAt: T0 + 4 } },
  { from: 'paused', event: cancel, condition: 'POST cancel', to: 'cancelled', also: ['emit:campaign.finished'] },
  { from: 'draft', event: start, condition: 'console start', to: 'sending', also: ['sendRecipients'], context: { startedAt: T0 + 1 } },
  { from: 'draft', event: start, condition: 'no recipients', to: 'sent', also: ['emit:campaign.finished'], input: { id: 'cmp_0', recipients: 0 }, context: { finishedAt: T0 + 1 } },
  { from: 'sending', event: progress(2), condition: 'recipients remain', to: 'sending', context: { handled: 2 } },
  { from: 'sending', event: progress(3, T0 + 9), condition: 'all recipients handled', to: 'sent', also: ['emit:campaign.finished'], context: { handled: 3, finishedAt: T0 + 9 } },
  {
    from: 'sending',
    event: failure,
    condition: 'a failure stops the campaign',
    to: 'failed',
    also: ['emit:campaign.finished', 'notifyFailure'],
    context: { lastError: 'template was paused by the messaging platform', finishedAt: T0 + 6 },
  },
  { from: 'paused', event: failure, condition: 'a failure stops the campaign', to: 'failed', also: ['emit:campaign.finished', 'notifyFailure'] },
  { from: 'paused', event: progress(3), condition: 'in-flight work completes after pause', to: 'paused', context: { handled: 3 } },
  { from: 'paused', event: resume, condition: 'nobody left to reach', to: 'sent', also: ['emit:campaign.finished'], via: [start, pause, progress(3)] },
  { from: 'cancelled', event: progress(1), condition: 'placed calls complete after cancel', to: 'cancelled', via: [start, cancel], context: { handled: 1 } },
]

const refuse = (from: CampaignState, event: CampaignEvent, says?: string): RefusedRow<CampaignEvent> => ({ from, event, says })
const refused: RefusedRow<CampaignEvent>[] = [
  refuse('draft', pause, 'pause applies only to a sending campaign'),
  refuse('paused', pause, 'already'),
  refuse('sent', pause),
  refuse('failed', pause),
  refuse('cancelled', pause, 'permanent'),
  refuse('draft', resume, 'resume applies only to a paused campaign'),
  refuse('sending', resume),
  refuse('sent', resume),
  refuse('failed', resume),
  refuse('cancelled', resume, 'permanent'),
  refuse('sent', cancel),
  refuse('failed', cancel),
  refuse('cancelled', cancel, 'already'),
  refuse('sending', start),
  refuse('paused', start),
  refuse('sent', start),
  refuse('failed', start),
  refuse('cancelled', start, 'permanent'),
]

describe('campaign: transitions', () => transitions(h, rows))
describe('campaign: refused moves', () => refusals(h, refused))

describe('campaign: progress reports are idempotent', () => {
  test('a repeated report does nothing', () => expectInert(reach(h, 'sending', { via: [start, progress(2)] }), progress(2, T0 + 7)))
  test('an older report does not lower the count', () => expectInert(reach(h, 'sending', { via: [start, progress(2)] }), progress(1, T0 + 8)))
  test('a report after sent does not finish it twice', () => expectInert(reach(h, 'sent'), progress(3, T0 + 9)))
  test('the count never passes the recipients', () => {
    const s = reach(h, 'paused')
    s.actor.send(progress(99))
    expect(s.actor.getSnapshot().context.handled).toBe(3)
  })
})

describe('campaign: snapshots', () => roundTrips(h))
