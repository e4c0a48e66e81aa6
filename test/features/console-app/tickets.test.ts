/** Stream tickets (console-app/tickets.ts): signed, 30 s, once, on every instance. */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCoordination } from '../../../src/coordination'
import { StreamTickets, TICKET_TTL_MS } from '../../../src/features/console-app/tickets'
import { apiErrorOf } from '../../../src/http/refusals'

const dir = mkdtempSync(join(tmpdir(), 'tickets-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const SECRET = 'a'.repeat(48)

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => ({ status: apiErrorOf(e)?.status, message: (e as Error).message }),
  )

test('a ticket opens one stream of its workspace, once, on any instance sharing the coordination', async () => {
  const coordination = await openCoordination({ dataDir: dir })
  const one = new StreamTickets(SECRET, coordination)
  const two = new StreamTickets(SECRET, coordination)
  const { ticket, expiresAt } = one.issue('ws_a')
  expect(ticket).not.toContain('ws_a') // opaque in logs: base64url, not the workspace in clear
  const claims = await two.redeem(ticket)
  expect(claims).toEqual({ workspaceId: 'ws_a', expiresAt })
  expect(await refusal(one.redeem(ticket))).toEqual({ status: 401, message: 'the stream ticket was used already: ask for a new one' })
  await coordination.close()
})

test('missing, forged, re-signed and expired tickets are 401', async () => {
  const coordination = await openCoordination({ dataDir: join(dir, 'b') })
  let now = Date.parse('2026-03-01T10:00:00.000Z')
  const tickets = new StreamTickets(SECRET, coordination, () => now)
  expect((await refusal(tickets.redeem(undefined)))?.status).toBe(401)
  expect((await refusal(tickets.redeem('nonsense')))?.status).toBe(401)
  const { ticket } = tickets.issue('ws_a')
  const [payload, signature] = ticket.split('.')
  // Another workspace in the payload, the old signature: refused.
  const other = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), w: 'ws_b' })).toString('base64url')
  expect((await refusal(tickets.redeem(`${other}.${signature}`)))?.message).toBe('the stream ticket does not verify')
  // Signed with another secret: refused.
  const foreign = new StreamTickets('b'.repeat(48), coordination, () => now).issue('ws_a').ticket
  expect((await refusal(tickets.redeem(foreign)))?.message).toBe('the stream ticket does not verify')
  now += TICKET_TTL_MS
  expect((await refusal(tickets.redeem(ticket)))?.message).toBe('the stream ticket expired: ask for a new one')
  await coordination.close()
})
