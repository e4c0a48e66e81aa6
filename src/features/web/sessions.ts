/**
 * The visitor's session: a random visitor id and an HMAC of it and the agent under SECRET_KEY, so
 * a web page can hold it (localStorage) and send it back without an account, and nobody can
 * forge one for another visitor or reuse one on another agent's widget. The conversation is
 * found from it (one per visitor and agent, a messaging `thread`), so the token never changes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { randomId } from '../../ids'

/** `wv_<visitor>.<signature>`; 16 random characters name a visitor, 32 of base64url sign it (192 bits). */
const SHAPE = /^wv_([A-Za-z0-9]{16,40})\.([A-Za-z0-9_-]{32})$/

export class VisitorSessions {
  constructor(private readonly secretKey: string) {}

  issue(agentId: string): { token: string; visitorId: string } {
    const visitorId = randomId(20)
    return { token: `wv_${visitorId}.${this.sign(agentId, visitorId)}`, visitorId }
  }

  /** The visitor id of a token issued for this agent, or null. */
  verify(agentId: string, token: string): string | null {
    const m = SHAPE.exec(token)
    if (!m) return null
    const want = Buffer.from(this.sign(agentId, m[1]!))
    const got = Buffer.from(m[2]!)
    return want.length === got.length && timingSafeEqual(want, got) ? m[1]! : null
  }

  private sign(agentId: string, visitorId: string): string {
    // Media tokens and recording links sign other prefixes with the same key: none opens the other.
    return createHmac('sha256', this.secretKey).update(`web-visitor:${agentId}:${visitorId}`).digest('base64url').slice(0, 32)
  }
}

/** The messaging thread of a visitor's conversation with an agent. */
export const visitorThread = (agentId: string, visitorId: string): string => `web:${agentId}:${visitorId}`
