/**
 * A calling campaign's pace: coordination that does not answer in time (Redis down, or late on a
 * loaded host) is waited out like a full calls-a-minute window, not thrown into the sender (which
 * would fail the whole campaign, every recipient after it unreached).
 */
import { expect, test } from 'bun:test'
import { systemClock } from '../../../src/clock'
import type { Coordination } from '../../../src/coordination/port'
import { CoordinationUnavailable } from '../../../src/coordination/unavailable'
import { CampaignLines, callingTarget } from '../../../src/features/campaigns/calling'
import type { CampaignDoc } from '../../../src/features/campaigns/repository'
import type { Target } from '../../../src/features/campaigns/sender'
import type { WorkspaceDoc } from '../../../src/kernel/tenancy'

// Only what the pace reads of a workspace and a campaign, and of coordination its rate check.
const workspace = { id: 'ws', parentId: null, plan: 'enterprise' } as unknown as WorkspaceDoc
// As above: the fields the target reads.
const campaign = { id: 'cmp_t', purpose: 'A reminder.', agentId: 'ag_1' } as unknown as CampaignDoc

function target(rateHit: Coordination['rateHit']): Target {
  const coordination = { rateHit } as unknown as Coordination // the pace's one coordination call
  // The pace touches none of the store and calls parts.
  const unused = {} as never
  const made = callingTarget({ recipients: unused, coordination, calls: () => unused, lines: new CampaignLines(), outcomes: unused, clock: systemClock }, campaign, workspace)
  if (typeof made === 'string') throw new Error(made)
  return made
}

test('a rate check Redis does not answer in time is tried again, then the line is taken', async () => {
  let asked = 0
  const pace = target(async () => {
    asked++
    if (asked === 1) throw new CoordinationUnavailable('Redis did not answer rateHit within 2 s')
    return { allowed: true } as Awaited<ReturnType<Coordination['rateHit']>>
  }).pace()
  const release = await pace
  expect(asked).toBe(2)
  expect(typeof release).toBe('function')
})

test('any other failure of the rate check is not swallowed', async () => {
  await expect(
    target(async () => {
      throw new Error('a script bug')
    }).pace(),
  ).rejects.toThrow('a script bug')
})
