/**
 * Stream tickets: a browser's EventSource cannot send the console token in a header, and the token
 * must never travel in a URL (logs, history, referrers). The page trades the token (POST, bearer)
 * for a ticket: good for one stream of one workspace, for 30 seconds, used once. It is signed
 * (HMAC-SHA256 with the service's secret), so any instance can check it; its single use is claimed
 * on the coordination port, so a second use fails on every instance.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Coordination } from '../../coordination/port'
import { unrecognised } from '../../refusals'

export const TICKET_TTL_MS = 30_000

export interface TicketClaims {
  workspaceId: string
  expiresAt: number
}

export class StreamTickets {
  constructor(
    private readonly secret: string,
    private readonly coordination: Pick<Coordination, 'idempotencyBegin'>,
    private readonly now: () => number = Date.now,
  ) {}

  issue(workspaceId: string): { ticket: string; expiresAt: number } {
    const expiresAt = this.now() + TICKET_TTL_MS
    const payload = Buffer.from(JSON.stringify({ w: workspaceId, e: expiresAt, n: randomBytes(12).toString('base64url') })).toString('base64url')
    return { ticket: `${payload}.${this.sign(payload)}`, expiresAt }
  }

  /** The ticket's claims; 401 when it is missing, forged, expired or used already. */
  async redeem(ticket: string | undefined): Promise<TicketClaims> {
    const [payload, signature] = (ticket ?? '').split('.')
    if (!payload || !signature) throw unrecognised('a stream ticket is required: POST /console/app/tickets with the console token')
    const expected = Buffer.from(this.sign(payload))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw unrecognised('the stream ticket does not verify')
    let claims: { w?: unknown; e?: unknown; n?: unknown }
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      throw unrecognised('the stream ticket does not verify')
    }
    if (typeof claims.w !== 'string' || typeof claims.e !== 'number' || typeof claims.n !== 'string') throw unrecognised('the stream ticket does not verify')
    const left = claims.e - this.now()
    if (left <= 0) throw unrecognised('the stream ticket expired: ask for a new one')
    // Wall time here, not the service clock: a manual clock must not make tickets live for ever.
    const first = await this.coordination.idempotencyBegin(`console-ticket:${claims.n}`, left + 1_000)
    if (first.state !== 'started') throw unrecognised('the stream ticket was used already: ask for a new one')
    return { workspaceId: claims.w, expiresAt: claims.e }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update('console-app-ticket:').update(payload).digest('base64url')
  }
}
