/**
 * Legacy endpoint numbers: integers per account (the key's workspace), 1, 2, 3…, never reused
 * after a delete, and telling nothing about other accounts (a global sequence would).
 *
 * The store has no atomic increment or compare-and-set, so the high-water mark is kept as
 * insert-only claims (store/account-numbers.ts). The mark only grows (a claim is never updated, and only
 * claims below one just made are pruned), so a deleted endpoint's number is never handed out
 * again. Pruning keeps about one claim per account.
 */
import { claimNextNumber, type NumberClaimDoc, numberClaimsSpec } from '../../store/account-numbers'
import type { WorkspaceCollection } from '../../store/workspace-scoped'

export type LegacyNumberDoc = NumberClaimDoc

export const legacyNumbersSpec = numberClaimsSpec('legacy_webhook_numbers')

// Each lost race means another create in the same account won a number; an account holds at
// most 20 endpoints, so 25 tries outlast any burst in which this create could still fit.
const CLAIM_TRIES = 25

export class EndpointNumbers {
  constructor(
    private readonly claims: WorkspaceCollection<LegacyNumberDoc>,
    /** Highest number an endpoint of the account holds: the floor for accounts with endpoints from before claims existed. */
    private readonly highestHeld: (workspaceId: string) => Promise<number>,
  ) {}

  /** The account's next number, now claimed: no other create gets it, now or after a delete. */
  async claim(workspaceId: string): Promise<number> {
    const claims = this.claims.in(workspaceId)
    const number = await claimNextNumber(claims, { floor: () => this.highestHeld(workspaceId), tries: CLAIM_TRIES })
    await claims.deleteMany({ number: { $lt: number } })
    return number
  }
}
