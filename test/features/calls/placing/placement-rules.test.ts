import { describe, expect, test } from 'bun:test'
import { callee, checkConsent, checkVariables, chooseAgent, chooseFrom, extractSpecs, idempotencyKeyOf, scheduleTime } from '../../../../src/features/calls/placing/placement-rules'
import { Refused } from '../../../../src/refusals'

const refusal = (fn: () => unknown): { reason: string; message: string; field?: unknown } => {
  try {
    fn()
  } catch (e) {
    if (e instanceof Refused) return { reason: e.reason, message: e.message, field: e.details?.field }
    throw e
  }
  throw new Error('expected a refusal')
}

const ava = { id: 'ag_1', name: 'Ava', answersCalls: true, phoneNumber: '+14155550100' }
const ben = { id: 'ag_2', name: 'Ben', answersCalls: true, phoneNumber: '+14155550101' }
const quiet = { id: 'ag_3', name: 'Quiet', answersCalls: false, phoneNumber: '+14155550102' }
const noNumber = { id: 'ag_4', name: 'Nonum', answersCalls: true, phoneNumber: null }

describe('placement rules', () => {
  test('every spelling of a number is one E.164 number; unreadable is a 400 naming to', () => {
    expect(callee('+1 (415) 555-0123')).toBe('+14155550123')
    expect(callee('14155550123')).toBe('+14155550123')
    expect(refusal(() => callee('call me maybe'))).toMatchObject({ reason: 'invalid', field: 'to' })
  })

  test('not a contact, opted out or do-not-call is 403', () => {
    expect(refusal(() => checkConsent('+14155550123', null)).reason).toBe('forbidden')
    expect(refusal(() => checkConsent('+14155550123', { optedOut: true, doNotCall: false })).reason).toBe('forbidden')
    expect(refusal(() => checkConsent('+14155550123', { optedOut: false, doNotCall: true })).reason).toBe('forbidden')
    expect(() => checkConsent('+14155550123', { optedOut: false, doNotCall: false })).not.toThrow()
  })

  test('one phone agent is chosen; several need a name (400); none is 409', () => {
    expect(chooseAgent([ava, quiet, noNumber], undefined)).toBe(ava)
    expect(refusal(() => chooseAgent([ava, ben], undefined))).toMatchObject({ reason: 'invalid', field: 'agent' })
    expect(chooseAgent([ava, ben], 'ben')).toBe(ben)
    expect(chooseAgent([ava, ben], 'ag_2')).toBe(ben)
    expect(refusal(() => chooseAgent([quiet, noNumber], undefined)).reason).toBe('conflict')
    expect(refusal(() => chooseAgent([ava, quiet], 'Quiet')).reason).toBe('conflict')
    expect(refusal(() => chooseAgent([ava], 'nobody'))).toMatchObject({ reason: 'invalid', field: 'agent' })
  })

  test('a brought number without carrier credentials cannot place calls (409)', () => {
    const brought = { number: '+14155550100', source: 'brought' as const, carrierCredentials: false }
    const rented = { number: '+14155550199', source: 'rented' as const, carrierCredentials: true }
    expect(refusal(() => chooseFrom(ava, [brought], undefined)).reason).toBe('conflict')
    expect(chooseFrom(ava, [brought, rented], '+1 415 555 0199')).toBe(rented)
    expect(refusal(() => chooseFrom(ava, [rented], '+14155550000'))).toMatchObject({ reason: 'invalid', field: 'from' })
    expect(chooseFrom(ava, [{ ...brought, carrierCredentials: true }], undefined).number).toBe('+14155550100')
  })

  test('scheduledFor: future within 90 days; past means now; bad dates 400', () => {
    const now = Date.parse('2026-11-24T10:00:00Z')
    expect(scheduleTime('2026-11-25T10:00:00Z', now)).toBe(Date.parse('2026-11-25T10:00:00Z'))
    expect(scheduleTime('2026-11-24T09:00:00Z', now)).toBeNull()
    expect(scheduleTime(null, now)).toBeNull()
    expect(refusal(() => scheduleTime('2027-06-01T00:00:00Z', now))).toMatchObject({ reason: 'invalid', field: 'scheduledFor' })
    expect(refusal(() => scheduleTime('2026-02-30', now))).toMatchObject({ reason: 'invalid', field: 'scheduledFor' })
  })

  test('variables and extract caps; the header key wins', () => {
    expect(refusal(() => checkVariables(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`v${i}`, i]))))).toMatchObject({ field: 'variables' })
    expect(refusal(() => checkVariables({ long: 'x'.repeat(301) }))).toMatchObject({ field: 'variables.long' })
    expect(extractSpecs([{ name: 'size', type: 'number' }])).toEqual([{ name: 'size', type: 'number', description: null, choices: null }])
    expect(refusal(() => extractSpecs([{ name: 'a' }, { name: 'A' }]))).toMatchObject({ field: 'extract[1].name' })
    expect(extractSpecs(undefined)).toBeNull()
    expect(idempotencyKeyOf('h', 'b')).toBe('h')
    expect(idempotencyKeyOf(undefined, 'b')).toBe('b')
  })
})
