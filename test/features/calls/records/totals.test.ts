import { describe, expect, test } from 'bun:test'
import { callTotals, tallyKey, totalsWindowStart } from '../../../../src/features/calls/records/totals'
import { addDays, localTime, startOfLocalDay } from '../../../../src/zoned-time'

const at = (s: string) => Date.parse(s)

describe('zoned time', () => {
  test('local day and hour across zones, half-hour offsets included', () => {
    expect(localTime(at('2026-11-24T20:00:00Z'), 'Asia/Kolkata')).toMatchObject({ day: '2026-11-25', hour: 1, minute: 30 })
    expect(localTime(at('2026-11-24T03:00:00Z'), 'America/New_York')).toMatchObject({ day: '2026-11-23', hour: 22 })
  })

  test('start of a local day, on DST change days too', () => {
    expect(new Date(startOfLocalDay('2026-11-25', 'Asia/Kolkata')).toISOString()).toBe('2026-11-24T18:30:00.000Z')
    expect(new Date(startOfLocalDay('2026-03-08', 'America/New_York')).toISOString()).toBe('2026-03-08T05:00:00.000Z')
    expect(new Date(startOfLocalDay('2026-03-09', 'America/New_York')).toISOString()).toBe('2026-03-09T04:00:00.000Z')
    // Santiago springs forward at midnight: that day starts at 01:00 local.
    expect(localTime(startOfLocalDay('2026-09-06', 'America/Santiago'), 'America/Santiago')).toMatchObject({ day: '2026-09-06', hour: 1 })
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28')
  })
})

describe('call totals', () => {
  const now = at('2026-11-24T12:00:00Z')

  test('day buckets in the workspace zone; outcomes, directions, surfaces and money summed', () => {
    const groups = [
      { key: tallyKey(at('2026-11-24T10:05:00Z'), 'outbound', 'answered', 'phone'), count: 2, seconds: 150, debitMicro: 40_000 },
      { key: tallyKey(at('2026-11-23T19:00:00Z'), 'outbound', 'missed', 'phone'), count: 1, seconds: 0, debitMicro: 0 },
      { key: tallyKey(at('2026-11-23T10:00:00Z'), 'inbound', 'answered', 'web'), count: 1, seconds: 60, debitMicro: 10_000 },
      { key: tallyKey(at('2026-11-22T10:00:00Z'), 'outbound', 'failed', 'phone'), count: 1, seconds: 0, debitMicro: 0 },
    ]
    const t = callTotals(groups, 3, 'Asia/Kolkata', now)
    expect(t).toMatchObject({
      days: 3,
      timezone: 'Asia/Kolkata',
      grain: 'day',
      calls: 5,
      inbound: 1,
      outbound: 4,
      answered: 3,
      missed: 1,
      failed: 1,
      seconds: 210,
      debitMicro: 50_000,
      surfaces: { phone: 4, web: 1, chatapp: 0 },
    })
    // 19:00Z on the 23rd is 00:30 on the 24th in Kolkata.
    expect(t.series).toEqual([
      { bucket: '2026-11-22', inbound: 0, outbound: 1, answered: 0, missed: 0, minutes: 0 },
      { bucket: '2026-11-23', inbound: 1, outbound: 0, answered: 1, missed: 0, minutes: 1 },
      { bucket: '2026-11-24', inbound: 0, outbound: 3, answered: 2, missed: 1, minutes: 2.5 },
    ])
  })

  test('one day is hourly', () => {
    const t = callTotals([{ key: tallyKey(at('2026-11-24T10:20:00Z'), 'outbound', 'answered', 'phone'), count: 1, seconds: 30, debitMicro: 0 }], 1, 'UTC', now)
    expect(t.grain).toBe('hour')
    expect(t.series).toHaveLength(24)
    expect(t.series[10]).toEqual({ bucket: '2026-11-24T10:00', inbound: 0, outbound: 1, answered: 1, missed: 0, minutes: 0.5 })
  })

  test('the window opens at local midnight days-1 days ago', () => {
    expect(new Date(totalsWindowStart(7, 'Asia/Kolkata', now)).toISOString()).toBe('2026-11-17T18:30:00.000Z')
    expect(new Date(totalsWindowStart(1, 'UTC', now)).toISOString()).toBe('2026-11-24T00:00:00.000Z')
  })
})
