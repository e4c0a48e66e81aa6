/**
 * Per-account integer numbers, 1, 2, 3…, never reused after a delete and telling nothing about
 * other accounts (a global sequence would): the legacy surface's ids for webhook endpoints and
 * agents (docs/spec.md gives legacy resources integer ids).
 *
 * The store has no atomic increment or compare-and-set, so numbers are insert-only claims: claiming
 * n inserts `{ workspaceId, number: n }`, and a unique (workspaceId, number) index lets only one of
 * two racing claims have it; the loser reads the new mark and claims the next one.
 */
import { type CollectionSpec, DuplicateKeyError } from './port'
import type { ScopedCollection } from './workspace-scoped'

export interface NumberClaimDoc {
  [field: string]: unknown
  /** `<workspaceId>:<number>`. */
  id: string
  workspaceId: string
  number: number
}

export const numberClaimsSpec = (name: string, extraIndexes: CollectionSpec['indexes'] = []): CollectionSpec => ({
  name,
  indexes: [
    {
      name: 'workspace_number',
      fields: [
        ['workspaceId', 1],
        ['number', -1],
      ],
      unique: true,
    },
    ...extraIndexes,
  ],
})

/**
 * Claims the next number of the account `claims` is scoped to, inserting `extra` with it. `floor` is the highest number known
 * to be held outside the claims (records from before claims existed). Returns the number, or what
 * `onConflict` decides when the insert clashes on another unique index of the caller's (e.g. "this
 * agent already has a number").
 */
export async function claimNextNumber<D extends NumberClaimDoc>(
  claims: ScopedCollection<D>,
  opts: { extra?: Omit<D, keyof NumberClaimDoc>; floor?: () => Promise<number>; tries: number; onConflict?: () => Promise<number | null> },
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const [mark] = await claims.find({}, { sort: [['number', -1]], limit: 1 })
    const number = Math.max(mark?.number ?? 0, (await opts.floor?.()) ?? 0) + 1
    try {
      await claims.insert({ ...(opts.extra ?? {}), id: `${claims.workspaceId}:${number}`, workspaceId: claims.workspaceId, number } as D)
      return number
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err
      const settled = await opts.onConflict?.()
      if (settled !== null && settled !== undefined) return settled
      if (attempt >= opts.tries) throw err
    }
  }
}
