/**
 * Legacy endpoint numbers: integers per account (the key's workspace), 1, 2, 3…, never reused
 * after a delete, and telling nothing about other accounts (a global sequence would).
 *
 * The store has no atomic increment or compare-and-set, so the high-water mark is kept as
 * insert-only claims: claiming number n inserts `{ workspaceId, number: n }`, and the unique
 * (workspaceId, number) index lets only one of two racing creates have it; the loser reads the
 * new mark and claims the next one. The mark only grows (a claim is never updated, and only
 * claims below one just made are pruned), so a deleted endpoint's number is never handed out
 * again. Pruning keeps about one claim per account.
 */
import type { Collection, CollectionSpec } from '../../store/port'
import { DuplicateKeyError } from '../../store/port'

export interface LegacyNumberDoc {
  [field: string]: unknown
  /** `<workspaceId>:<number>`. */
  id: string
  workspaceId: string
  number: number
}

export const legacyNumbersSpec: CollectionSpec = {
  name: 'legacy_webhook_numbers',
  indexes: [{ name: 'workspace_number', fields: [['workspaceId', 1], ['number', -1]], unique: true }],
}

// Each lost race means another create in the same account won a number; an account holds at
// most 20 endpoints, so 25 tries outlast any burst in which this create could still fit.
const CLAIM_TRIES = 25

export class EndpointNumbers {
  constructor(
    private readonly claims: Collection<LegacyNumberDoc>,
    /** Highest number an endpoint of the account holds: the floor for accounts with endpoints from before claims existed. */
    private readonly highestHeld: (workspaceId: string) => Promise<number>,
  ) {}

  /** The account's next number, now claimed: no other create gets it, now or after a delete. */
  async claim(workspaceId: string): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const [mark] = await this.claims.find({ workspaceId }, { sort: [['number', -1]], limit: 1 })
      const number = Math.max(mark?.number ?? 0, await this.highestHeld(workspaceId)) + 1
      try {
        await this.claims.insert({ id: `${workspaceId}:${number}`, workspaceId, number })
      } catch (err) {
        if (err instanceof DuplicateKeyError && attempt < CLAIM_TRIES) continue
        throw err
      }
      await this.claims.deleteMany({ workspaceId, number: { $lt: number } })
      return number
    }
  }
}
