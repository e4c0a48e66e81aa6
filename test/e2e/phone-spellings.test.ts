/**
 * Which spellings of a phone number are read (docs/api/conventions.md, "Phone numbers"): with its
 * country code, marked by `+` or `00` or not at all; spaces, dots, dashes and brackets anywhere.
 * A national spelling is refused with a message saying what is read, never taken for a number in
 * some other country (`(202) 555-0123` reads as +20, Egypt, when its digits are taken as E.164).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PHONE_SPELLINGS } from '../../src/features/contacts/phone'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
})
afterAll(() => s?.stop())

const contact = (phone: string) => s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
const call = (to: string) => s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'Confirm your appointment' } })

describe('console contacts: POST /console/workspaces/{ws}/contacts', () => {
  test('each spelling with a country code is read, to E.164', async () => {
    for (const [spelling, e164] of [
      ['+1 (415) 555-0123', '+14155550123'],
      ['+1.415.555.0124', '+14155550124'],
      ['14155550125', '+14155550125'],
      ['1 (415) 555-0126', '+14155550126'],
      ['0044 20 7946 0018', '+442079460018'],
      ['+44 (0)20 7946 0019', '+442079460019'],
      ['919876543210', '+919876543210'],
    ]) {
      const r = await contact(spelling)
      expect(r.status).toBe(201)
      expect(r.body.phone).toBe(e164)
    }
  })

  test('a national spelling is refused, saying what is read; none is taken for another country', async () => {
    for (const spelling of ['(415) 555-0123', '(202) 555-0123', '202-555-0123', '3125550123', '020 7946 0018']) {
      const r = await contact(spelling)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error: `phone: "${spelling}" is not a phone number we can read: ${PHONE_SPELLINGS}`, field: 'phone' })
    }
    expect(PHONE_SPELLINGS).toContain('country code')
    expect(PHONE_SPELLINGS).toContain('(415) 555-0123 is not read')
  })
})

describe('POST /api/v1/calls `to`', () => {
  test('a national spelling is a 400 naming `to` with the same words; a number with its code rings', async () => {
    for (const spelling of ['(415) 555-0140', '(202) 555-0140']) {
      const r = await call(spelling)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error: `to: "${spelling}" is not a phone number we can read: ${PHONE_SPELLINGS}`, field: 'to' })
    }
    expect((await contact('+14155550140')).status).toBe(201)
    for (const spelling of ['1 (415) 555-0140', '+1 415 555 0140', '001 415 555 0140']) {
      const placed = await call(spelling)
      expect(placed.status).toBe(202)
      expect(placed.body.to).toBe('+14155550140')
    }
  })
})
