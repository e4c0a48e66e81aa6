/**
 * The campaign chart's scheduled start, row by row: a draft with `scheduledAt` starts itself when
 * its durable timer is due (an early, stale or unscheduled wake-up changes nothing), and its
 * deadline exists only while it is a draft, so a manual start or a cancel means it never starts
 * again; a version-3 snapshot (no schedule) is migrated to start by hand only.
 */

import { describe, expect, test } from 'bun:test'
import { createActor } from 'xstate'
import { CAMPAIGN_EFFECTS, type CampaignEvent, campaignDeadlines, campaignMachine, canApply } from '../../machines/campaign'
import { migrateCampaign } from '../../src/features/campaigns/actor'
import { expectInert, type Harness, type Row, reach, reachSettled, roundTrips, starts, transitions } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const AT = T0 + 3_600_000
const due = (at = AT): CampaignEvent => ({ type: 'timer.due', at, name: 'start' })
const start: CampaignEvent = { type: 'campaign.start', at: T0 + 1 }
const cancel: CampaignEvent = { type: 'campaign.cancel', at: T0 + 2 }
const pause: CampaignEvent = { type: 'campaign.pause', at: T0 + 3 }

const h: Harness<CampaignEvent> = {
  machine: campaignMachine,
  effects: CAMPAIGN_EFFECTS,
  invokes: CAMPAIGN_EFFECTS,
  input: { id: 'cmp_s', recipients: 3, scheduledAt: AT },
  canApply,
  paths: { draft: [], sending: [due()], paused: [due(), pause], cancelled: [cancel] },
}

describe('campaign (scheduled): created', () => {
  starts(h, [
    { name: 'created with scheduledAt', input: { id: 'cmp_s', recipients: 3, scheduledAt: AT }, to: 'draft', context: { scheduledAt: AT, startedAt: null } },
    { name: 'created without', input: { id: 'cmp_n', recipients: 3 }, to: 'draft', context: { scheduledAt: null } },
  ])
})

const rows: Row<CampaignEvent>[] = [
  { from: 'draft', event: due(), condition: 'the scheduled instant arrives', to: 'sending', also: ['sendRecipients'], context: { startedAt: AT, scheduledAt: AT } },
  { from: 'draft', event: due(AT + 5_000), condition: 'woken late (after a restart)', to: 'sending', also: ['sendRecipients'], context: { startedAt: AT + 5_000 } },
  { from: 'draft', event: due(), condition: 'no recipients', to: 'sent', also: ['emit:campaign.finished'], input: { id: 'cmp_0', recipients: 0, scheduledAt: AT } },
  { from: 'draft', event: start, condition: 'started by hand before the time', to: 'sending', also: ['sendRecipients'], context: { startedAt: T0 + 1, scheduledAt: AT } },
  { from: 'draft', event: cancel, condition: 'cancelled before the time', to: 'cancelled', also: ['emit:campaign.finished'] },
]

describe('campaign (scheduled): transitions', () => transitions(h, rows))

describe('campaign (scheduled): wake-ups that change nothing', () => {
  test('an early wake-up', () => expectInert(reach(h, 'draft'), due(AT - 1)))
  test('a wake-up of a campaign with no schedule', () => expectInert(reach(h, 'draft', { input: { id: 'cmp_n', recipients: 3 } }), due()))
  test('a stale wake-up after a manual start', async () => expectInert(await reachSettled(h, 'sending', { via: [start] }), due()))
  test('a stale wake-up after a cancel', () => expectInert(reach(h, 'cancelled'), due()))
  test('a stale wake-up while paused', async () => expectInert(await reachSettled(h, 'paused'), due()))
})

describe('campaign (scheduled): the durable deadline', () => {
  test('a scheduled draft waits for `start` at scheduledAt', () => {
    expect(campaignDeadlines(reach(h, 'draft').actor.getSnapshot())).toEqual([{ name: 'start', at: AT }])
  })
  test('none without a schedule', () => {
    expect(campaignDeadlines(reach(h, 'draft', { input: { id: 'cmp_n', recipients: 3 } }).actor.getSnapshot())).toEqual([])
  })
  test('none once it left draft: started by hand, started by the timer, cancelled', async () => {
    expect(campaignDeadlines((await reachSettled(h, 'sending', { via: [start] })).actor.getSnapshot())).toEqual([])
    expect(campaignDeadlines((await reachSettled(h, 'sending')).actor.getSnapshot())).toEqual([])
    expect(campaignDeadlines(reach(h, 'cancelled').actor.getSnapshot())).toEqual([])
  })
})

describe('campaign (scheduled): snapshots', () => {
  roundTrips(h)
  test('a version-3 draft is migrated to start by hand only; other versions are refused', () => {
    const old = createActor(campaignMachine, { input: { id: 'cmp_v3', recipients: 2 } })
      .start()
      .getPersistedSnapshot() as any
    delete old.context.scheduledAt
    const migrated = migrateCampaign({ version: 3, state: 'draft', snapshot: old }) as any
    const restored = createActor(campaignMachine, { snapshot: migrated } as any).start() as ReturnType<typeof createActor<typeof campaignMachine>>
    expect(restored.getSnapshot().context.scheduledAt).toBeNull()
    expect(campaignDeadlines(restored.getSnapshot())).toEqual([])
    expect(migrateCampaign({ version: 2, state: 'draft', snapshot: old })).toBeNull()
  })
})
