/**
 * The campaign sender with a fake target: a stop takes effect before the next claim while what was
 * handed over completes; a new run right after (resume) never sends to anyone twice; rows a crash
 * left `sending` are failed, not sent again; a platform refusing most sends fails the campaign.
 */
import { afterAll, afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CampaignOutcomes } from '../../../src/features/campaigns/outcomes'
import { type CampaignDoc, openCampaigns, openRecipients, type RecipientDoc } from '../../../src/features/campaigns/repository'
import { CampaignSender, type Target } from '../../../src/features/campaigns/sender'
import { createLogger } from '../../../src/logger'
import type { Collection } from '../../../src/store/port'
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite'
import { until } from '../../support/until'

const dir = mkdtempSync(join(tmpdir(), 'campaign-sender-'))
let n = 0
let store: SqliteStore
let rows: Collection<RecipientDoc>
let campaigns: Collection<CampaignDoc>
afterAll(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(async () => {
  store = await openSqliteStore(join(dir, `s${n++}.db`))
  rows = await openRecipients(store)
  campaigns = (await openCampaigns(store)).acrossWorkspaces
})
// Closed before the directory goes: the checkpointer thread would otherwise hold a removed file.
afterEach(() => store.close())

const COUNT = 40
async function seed(statuses: Record<number, RecipientDoc['status']> = {}) {
  await campaigns.insert({
    id: 'cmp_t',
    workspaceId: 'ws',
    agentId: 'ag_1',
    name: 'T',
    kind: 'chatapp',
    template: 'promo',
    language: 'en',
    purpose: null,
    recipients: COUNT,
    status: 'sending',
    scheduledAt: null,
    startedAt: null,
    finishedAt: null,
    createdAt: '2026-11-25T00:00:00.000Z',
    lastError: null,
  })
  for (let i = 0; i < COUNT; i++)
    await rows.insert({ id: `cmp_t:${i}`, campaignId: 'cmp_t', workspaceId: 'ws', index: i, phone: `+1415555${1000 + i}`, status: statuses[i] ?? 'pending', createdAt: '2026-11-25T00:00:00.000Z' })
}

/** A target whose sends wait for `gate` to open; every hand-over recorded. */
function fakeTarget(outcomes: CampaignOutcomes, refuse = false) {
  const handed: string[] = []
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const target: Target = {
    window: 4,
    pace: async () => () => {},
    async hand(r) {
      handed.push(r.phone)
      await gate
      if (refuse) {
        await outcomes.write(r.id, () => rows.update(r.id, { status: 'failed', error: 'refused' }))
        return 'refused'
      }
      await outcomes.sent(r.id, `m${r.index}`, {})
      return 'handed'
    },
  }
  return { target, handed, open }
}

function sender(target: Target, outcomes: CampaignOutcomes) {
  const contacts = { findByPhones: async (_ws: string, phones: string[]) => phones.map((phone) => ({ phone, name: null, email: null, optedOut: phone === '+14155551039', doNotCall: false })) }
  return new CampaignSender({ campaigns, recipients: rows, contacts: contacts as any, outcomes, workspace: async (id) => ({ id }) as any, target: async () => target, logger: createLogger('silent') })
}
const report = () => {
  const r = { progress: [] as number[], failed: [] as string[] }
  return { r, port: { progress: (h: number) => void r.progress.push(h), failed: (e: string) => void r.failed.push(e) } }
}

test('stop before the next claim; the claimed complete; a new run sends to the rest, nobody twice', async () => {
  await seed()
  const outcomes = new CampaignOutcomes({ recipients: rows })
  const first = fakeTarget(outcomes)
  const s = sender(first.target, outcomes)
  const one = report()
  const stop = s.start('cmp_t', one.port)
  await until(
    'four recipients handed over',
    () => first.handed.length,
    (n) => n >= 4,
    { everyMs: 1 },
  )
  stop()
  first.open()
  await s.settled()
  expect(first.handed).toHaveLength(4)
  expect(await rows.count({ campaignId: 'cmp_t', status: 'sent' })).toBe(4)
  expect(one.r.failed).toEqual([])

  const second = fakeTarget(outcomes)
  second.open()
  const two = report()
  s.start('cmp_t', two.port)
  await s.settled()
  const all = [...first.handed, ...second.handed]
  expect(new Set(all).size).toBe(all.length)
  expect(all).toHaveLength(COUNT - 1) // one opted out
  expect(await rows.count({ campaignId: 'cmp_t', status: 'skipped' })).toBe(1)
})

test('a resume while the paused run still has sends in flight: those complete once, the new run skips them', async () => {
  await seed()
  const outcomes = new CampaignOutcomes({ recipients: rows })
  const first = fakeTarget(outcomes)
  const s = sender(first.target, outcomes)
  const stop = s.start('cmp_t', report().port)
  await until(
    'four recipients handed over',
    () => first.handed.length,
    (n) => n >= 4,
    { everyMs: 1 },
  )
  stop()
  const second = fakeTarget(outcomes)
  second.open()
  const two = report()
  s.start('cmp_t', two.port)
  await Bun.sleep(20)
  first.open()
  await s.settled()
  const all = [...first.handed, ...second.handed]
  expect(new Set(all).size).toBe(all.length)
  expect(all).toHaveLength(COUNT - 1)
  // The second run waited for the first run's sends before reporting everyone handled.
  expect(two.r.progress.at(-1)).toBe(COUNT)
})

test('rows a crash left `sending` are failed as interrupted, never sent again', async () => {
  await seed({ 0: 'sending', 1: 'sending', 2: 'sent' })
  const outcomes = new CampaignOutcomes({ recipients: rows })
  const t = fakeTarget(outcomes)
  t.open()
  const s = sender(t.target, outcomes)
  const r = report()
  s.start('cmp_t', r.port)
  await s.settled()
  expect(t.handed).not.toContain('+14155551000')
  expect(t.handed).not.toContain('+14155551001')
  expect(t.handed).toHaveLength(COUNT - 4)
  expect((await rows.get('cmp_t:0'))!.error).toStartWith('interrupted')
  expect(r.r.progress.at(-1)).toBe(COUNT)
})

test('a platform refusing most sends fails the campaign with the reason; the rest are not sent', async () => {
  await seed()
  const outcomes = new CampaignOutcomes({ recipients: rows })
  const t = fakeTarget(outcomes, true)
  t.open()
  const s = sender({ ...t.target, window: 1 }, outcomes)
  const r = report()
  await rows.deleteMany({})
  for (let i = 0; i < 80; i++)
    await rows.insert({ id: `cmp_t:${i}`, campaignId: 'cmp_t', workspaceId: 'ws', index: i, phone: `+1415556${1000 + i}`, status: 'pending', createdAt: '2026-11-25T00:00:00.000Z' })
  s.start('cmp_t', r.port)
  await s.settled()
  expect(r.r.failed).toEqual(['the platform refused 50 of the last 50 sends (last: refused); the rest were not sent'])
  expect(t.handed).toHaveLength(50)
  expect(await rows.count({ status: 'pending' })).toBe(30)
})

test('a contact who opts out after their batch was read is skipped, not sent', async () => {
  await seed()
  const outcomes = new CampaignOutcomes({ recipients: rows })
  const t = fakeTarget(outcomes)
  const s = sender(t.target, outcomes)
  s.start('cmp_t', report().port)
  await until(
    'four recipients handed over',
    () => t.handed.length,
    (n) => n >= 4,
    { everyMs: 1 },
  )
  // The batch (all 40) is read; number 30 opts out now.
  s.consentWithdrawn('ws', '+14155551030', 'opted_out')
  s.consentWithdrawn('ws', '+14155551031', 'do_not_call') // calls only: a broadcast still sends
  t.open()
  await s.settled()
  expect(t.handed).not.toContain('+14155551030')
  expect(t.handed).toContain('+14155551031')
  expect((await rows.get('cmp_t:30'))!).toMatchObject({ status: 'skipped', error: 'opted out' })
})
