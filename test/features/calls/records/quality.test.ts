/**
 * A workspace's call quality (src/features/calls/records/quality.ts): answer time over every turn, the
 * interruptions and suspected cut-offs per call, transfers by how they ended, overall and per
 * hour, each hour on whole instants; a try without media counts only its transfer.
 */
import { expect, test } from 'bun:test'
import { callQuality } from '../../../../src/features/calls/records/quality'
import type { CallTransferRow } from '../../../../src/features/calls/records/repository'
import type { TurnStages } from '../../../../src/voice/latency'
import { tryRow } from '../try-row'

const turn = (heard: number | null, sent: number | null = heard): TurnStages => ({
  endpointingMs: 200,
  sttMs: 20,
  sttQueueMs: null,
  llmFirstTokenMs: 30,
  ttsFirstByteMs: 40,
  toFirstAudioMs: sent,
  toFirstHeardMs: heard,
})
const transfer = (outcome: CallTransferRow['outcome']): CallTransferRow => ({
  to: 'Desk',
  phoneNumber: '+14155550199',
  mode: 'cold',
  by: 'agent',
  requestedAt: '2026-12-07T10:00:00.000Z',
  startedAt: null,
  answeredAt: null,
  endedAt: null,
  outcome,
  seconds: 0,
  error: null,
})

test('figures overall and per hour, the hours on whole instants', () => {
  const now = Date.parse('2026-12-07T12:30:00.000Z')
  const rows = [
    tryRow({
      id: 'a:1',
      createdAt: '2026-12-07T12:10:00.000Z',
      media: 'done',
      latencyTurns: [turn(300), turn(null, 500)],
      overlaps: { resumed: 1, taken: 2, talkedOver: 0 },
      talkedInto: 1,
      transfer: transfer('answered'),
    }),
    tryRow({ id: 'b:1', createdAt: '2026-12-07T11:59:59.000Z', media: 'done', latencyTurns: [turn(900)], overlaps: { resumed: 0, taken: 1, talkedOver: 3 } }),
    tryRow({ id: 'c:1', createdAt: '2026-12-07T11:20:00.000Z', transfer: transfer(null) }),
  ]
  const q = callQuality(rows, '24h', now, false)
  expect([q.since, q.until, q.grain, q.buckets.length]).toEqual(['2026-12-06T13:00:00.000Z', '2026-12-07T13:00:00.000Z', 'hour', 24])
  expect(q.overall).toEqual({
    calls: 2,
    turns: 3,
    answerMs: { p50: 500, p95: 900 },
    interruptions: 3,
    interruptionsPerCall: 1.5,
    cutOffs: 1,
    cutOffsPerCall: 0.5,
    transfers: { total: 2, answered: 1, no_answer: 0, busy: 0, declined: 0, failed: 0, pending: 1 },
    refused: { total: 0, outbound: 0, inbound: 0, web: 0, calls: [] },
  })
  const noon = q.buckets.at(-1)!
  expect([noon.since, noon.until, noon.calls, noon.answerMs, noon.cutOffsPerCall]).toEqual(['2026-12-07T12:00:00.000Z', '2026-12-07T13:00:00.000Z', 1, { p50: 300, p95: 500 }, 1])
  const eleven = q.buckets.at(-2)!
  expect([eleven.calls, eleven.interruptionsPerCall, eleven.transfers.pending]).toEqual([1, 1, 1])
  expect(q.buckets.slice(0, -2).every((b) => b.calls === 0 && b.answerMs === null && b.interruptionsPerCall === null)).toBe(true)
})

test('a week is seven UTC days', () => {
  const q = callQuality([], '7d', Date.parse('2026-12-07T12:30:00.000Z'), false)
  expect([q.grain, q.buckets.length, q.buckets[0]!.since, q.until]).toEqual(['day', 7, '2026-12-01T00:00:00.000Z', '2026-12-08T00:00:00.000Z'])
  expect(q.overall.answerMs).toBeNull()
})

test('calls refused at capacity, per hour and per day, their recorded calls with them', () => {
  const at = (iso: string) => Date.parse(iso)
  const dirs = (outbound: number, inbound: number, web: number) => ({ outbound, inbound, web })
  const refused = [
    { hour: at('2026-12-07T12:00:00.000Z'), refused: 3, directions: dirs(1, 2, 0), calls: ['call_a'] },
    { hour: at('2026-12-07T09:00:00.000Z'), refused: 1, directions: dirs(0, 0, 1), calls: [] },
    // Outside the day, inside the week.
    { hour: at('2026-12-05T09:00:00.000Z'), refused: 4, directions: dirs(4, 0, 0), calls: ['call_b'] },
  ]
  const now = at('2026-12-07T12:30:00.000Z')
  const day = callQuality([], '24h', now, false, refused)
  expect(day.overall.refused).toEqual({ total: 4, outbound: 1, inbound: 2, web: 1, calls: ['call_a'] })
  expect(day.buckets.at(-1)!.refused).toEqual({ total: 3, outbound: 1, inbound: 2, web: 0, calls: ['call_a'] })
  expect(day.buckets.at(-4)!.refused.total).toBe(1)
  expect(day.buckets.reduce((n, b) => n + b.refused.total, 0)).toBe(4)
  const week = callQuality([], '7d', now, false, refused)
  expect(week.overall.refused).toEqual({ total: 8, outbound: 5, inbound: 2, web: 1, calls: ['call_a', 'call_b'] })
  expect(week.buckets.map((b) => b.refused.total)).toEqual([0, 0, 0, 0, 4, 0, 4])
})
