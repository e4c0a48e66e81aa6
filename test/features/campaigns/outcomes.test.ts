/** Campaign outcomes on recipient rows: receipts racing the sender's own write, forward-only moves, replies, call outcomes. */
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CampaignOutcomes } from '../../../src/features/campaigns/outcomes'
import { personalise } from '../../../src/features/campaigns/personalise'
import { openRecipients, type RecipientDoc } from '../../../src/features/campaigns/repository'
import type { Collection } from '../../../src/store/port'
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite'

const dir = mkdtempSync(join(tmpdir(), 'campaign-outcomes-'))
let n = 0
let store: SqliteStore
let rows: Collection<RecipientDoc>
let outcomes: CampaignOutcomes
afterAll(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(async () => {
  store = await openSqliteStore(join(dir, `o${n++}.db`))
  rows = await openRecipients(store)
  outcomes = new CampaignOutcomes({ recipients: rows })
})
// Closed before the directory goes: the checkpointer thread would otherwise hold a removed file.
afterEach(() => store.close())

const row = (index: number, fields: Partial<RecipientDoc> = {}): Promise<RecipientDoc> =>
  rows.insert({ id: `cmp_a:${index}`, campaignId: 'cmp_a', workspaceId: 'ws', index, phone: `+1415555000${index}`, status: 'sending', createdAt: '2026-11-25T00:00:00.000Z', ...fields })
const status = async (index: number) => (await rows.get(`cmp_a:${index}`))!.status
const receipt = (id: string, s: 'sent' | 'delivered' | 'read' | 'failed') =>
  outcomes.receipt({ platformMessageId: id, status: s, at: 0, ...(s === 'failed' ? { error: { code: '131047', message: 'Re-engagement message' } } : {}) })

describe('receipts', () => {
  test("a receipt that comes while the sender's write is in flight is applied after it, never overwritten", async () => {
    await row(0)
    const sent = outcomes.sent('cmp_a:0', 'wamid.1', { sentAt: '2026-11-25T00:00:01.000Z' })
    const delivered = receipt('wamid.1', 'delivered')
    await Promise.all([sent, delivered])
    expect(await status(0)).toBe('delivered')
  })

  test('a receipt before the platform even answered the send is parked and applied with the sender’s write', async () => {
    await row(1)
    await receipt('wamid.2', 'read')
    expect(await status(1)).toBe('sending')
    await outcomes.sent('cmp_a:1', 'wamid.2', {})
    expect(await status(1)).toBe('read')
  })

  test('only forward: a late delivered after read changes nothing; failed only before read', async () => {
    await row(2, { status: 'sent', platformMessageId: 'wamid.3' })
    await receipt('wamid.3', 'read')
    await receipt('wamid.3', 'delivered')
    await receipt('wamid.3', 'failed')
    expect(await status(2)).toBe('read')
    await row(3, { status: 'sent', platformMessageId: 'wamid.4' })
    await receipt('wamid.4', 'delivered')
    await receipt('wamid.4', 'failed')
    const failed = (await rows.get('cmp_a:3'))!
    expect([failed.status, failed.error]).toEqual(['failed', 'Re-engagement message (131047)'])
    await receipt('wamid.4', 'read')
    expect(await status(3)).toBe('failed')
  })

  test("another feature's message: nothing happens", async () => {
    await receipt('wamid.none', 'delivered')
    expect(await rows.count({})).toBe(0)
  })
})

describe('replies and calls', () => {
  test('a reply counts on the newest campaign message the customer had', async () => {
    await row(4, { status: 'delivered', phone: '+14155559999', sentAt: '2026-11-25T00:00:01.000Z' })
    await rows.insert({
      id: 'cmp_b:0',
      campaignId: 'cmp_b',
      workspaceId: 'ws',
      index: 0,
      phone: '+14155559999',
      status: 'sent',
      sentAt: '2026-11-25T00:00:09.000Z',
      createdAt: '2026-11-25T00:00:00.000Z',
    })
    await outcomes.replied('ws', '+14155559999')
    expect(await status(4)).toBe('delivered')
    expect((await rows.get('cmp_b:0'))!.status).toBe('replied')
    await outcomes.replied('other-ws', '+14155559999')
    await outcomes.replied('ws', '+10000000000')
  })

  test('call outcomes: answered → delivered, missed stays sent, failed → failed; other calls ignored', async () => {
    await row(5, { status: 'sent', callId: 'out_1' })
    await row(6, { status: 'sent', callId: 'out_2' })
    await row(7, { status: 'sent', callId: 'out_3' })
    await outcomes.callAnalysed({ id: 'out_1', status: 'completed', reference: 'cmp_a', phone: null, hangup: null })
    await outcomes.callAnalysed({ id: 'out_2', status: 'missed', reference: 'cmp_a', phone: null, hangup: null })
    await outcomes.callAnalysed({ id: 'out_3', status: 'failed', reference: 'cmp_a', phone: null, hangup: null })
    await outcomes.callAnalysed({ id: 'out_1', status: 'failed', reference: 'my-own-ref', phone: null, hangup: null })
    expect([await status(5), await status(6), await status(7)]).toEqual(['delivered', 'sent', 'failed'])
  })

  test('a voicemail left (completed, hangup voicemail) is delivered and marked so', async () => {
    await row(8, { status: 'sent', callId: 'out_4' })
    await outcomes.callAnalysed({ id: 'out_4', status: 'completed', reference: 'cmp_a', phone: null, hangup: 'voicemail' })
    expect(await status(8)).toBe('delivered')
    expect((await rows.get('cmp_a:8'))?.voicemail).toBe(true)
  })
})

test('personalise: {{1}} is the name (or number), the rest their samples, never blank', () => {
  const template = {
    variableCount: 3,
    variableLabels: [
      { position: 2, sample: 'Friday' },
      { position: 3, sample: ' ' },
    ],
  }
  expect(personalise(template, { name: 'Asha', phone: '+14155550000' })).toEqual(['Asha', 'Friday', 'Asha'])
  expect(personalise(template, { name: null, phone: '+14155550000' })).toEqual(['+14155550000', 'Friday', '+14155550000'])
  expect(personalise({ variableCount: 0, variableLabels: [] }, { name: 'A', phone: '+1' })).toEqual([])
})
