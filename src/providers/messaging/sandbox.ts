/**
 * The sandbox messaging platform (default): an in-process stand-in for a chat app, so the product
 * works with no platform account. It keeps every message sent (the console and tests read them)
 * and reports receipts as a platform would: `sent` at once, `delivered` when the message reaches
 * the phone (at once here). A number set to refuse (tests of the 502 path) is refused.
 */

import type { Clock } from '../../clock'
import { randomId } from '../../ids'
import { type MessagingPlatform, PlatformRefused, type Receipt, type SendRequest, type Sent } from './port'

export interface SandboxSent extends SendRequest {
  platformMessageId: string
  at: number
}

/** Messages kept for reading back: the newest 10,000 (a demo or a test never needs more). */
const KEEP = 10_000

export class SandboxPlatform implements MessagingPlatform {
  readonly name = 'sandbox'
  readonly sent: SandboxSent[] = []
  /** Customer numbers whose messages the platform refuses (as for a number not on the app). */
  readonly refuse = new Set<string>()
  private readonly listeners: ((r: Receipt) => Promise<void> | void)[] = []

  constructor(private readonly clock: Clock) {}

  async send(request: SendRequest): Promise<Sent> {
    if (this.refuse.has(request.to)) throw new PlatformRefused(`${request.to} is not on the messaging app`, '131026')
    const platformMessageId = `sbm_${randomId(20)}`
    const at = this.clock.now()
    this.sent.push({ ...request, platformMessageId, at })
    if (this.sent.length > KEEP) this.sent.splice(0, this.sent.length - KEEP)
    // Receipts arrive after the send has answered, as a platform's webhooks do.
    setTimeout(async () => {
      for (const status of ['sent', 'delivered'] as const) for (const l of this.listeners) await Promise.resolve(l({ platformMessageId, status, at })).catch(() => {})
    }, 0)
    return { platformMessageId }
  }

  /** A later receipt for a message sent here (a `read`, a late `failed`), as the platform's webhook would bring it: tests and demos. */
  async report(receipt: Receipt): Promise<void> {
    for (const l of this.listeners) await Promise.resolve(l(receipt)).catch(() => {})
  }

  onReceipt(listener: (receipt: Receipt) => Promise<void> | void): void {
    this.listeners.push(listener)
  }
}
