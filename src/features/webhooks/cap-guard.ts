/**
 * Keeps a per-owner cap (20 webhooks per agent, 20 legacy endpoints per account) under concurrent
 * creates. A create counts, then waits (DNS for the target check, store round trips), then inserts:
 * racing creates all count below the cap and all insert. The store has no transactions or
 * conditional insert, so each create checks again AFTER its insert and takes its row back if it is
 * over. This decides that second check.
 *
 * Rows are ordered by a key fixed before the insert (`createdAt` then the time-ordered id; the
 * legacy number, claimed atomically). After its insert a create reads every row of the owner:
 * - at most `cap` rows → keep. This is what makes the cap hold under ANY interleaving: take the
 *   keeper whose deciding read came last. Every other keeper inserted before its own deciding read,
 *   so before that last one, and keepers never delete their rows; so that read saw every keeper
 *   and found at most `cap` rows. Refusing is always safe, so keepers are the only thing to bound.
 * - `cap` or more rows ordered before its own → refuse (those rows keep it over the cap for good:
 *   the first `cap` rows by key never see `cap` rows ahead of them, so never leave for this reason).
 * - otherwise rows behind it are still to make their own check and back out: read again shortly.
 * "Keep iff fewer than `cap` rows ahead" alone is not enough: a row whose key was fixed earlier can
 * land (insert over a slow connection) after a later row already counted what was ahead of it, and
 * both keep. Reading the total keeps it exact; the order only decides who waits and who leaves, so
 * that a burst with room for some keeps them instead of every racer seeing too many and leaving.
 * If the burst has not sorted itself out by SETTLE_WAIT_MS, the create is refused: safe, and only
 * happens when rows land out of key order (a later row already kept; test/e2e/webhooks-races.test.ts)
 * or the store is very slow.
 */

/** Longer than the store needs to let a burst's surplus back out, short next to a client timeout. */
export const SETTLE_WAIT_MS = 2_000
const FIRST_PAUSE_MS = 5
const MAX_PAUSE_MS = 50

export interface CapCheck<Row> {
  cap: number
  /** The row this create inserted. */
  mine: Row
  /** Every row the cap counts, read fresh from the store (this create's row included). */
  rows: () => Promise<Row[]>
  /** Whether `a` comes before `b` in creation order; a total order on distinct rows. */
  before: (a: Row, b: Row) => boolean
}

/** Whether this create may keep its row; false: delete it and answer the cap refusal. */
export async function withinCap<Row>(check: CapCheck<Row>): Promise<boolean> {
  const deadline = performance.now() + SETTLE_WAIT_MS
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    const rows = await check.rows()
    if (rows.length <= check.cap) return true
    const ahead = rows.filter((row) => check.before(row, check.mine)).length
    if (ahead >= check.cap || performance.now() + pause > deadline) return false
    // Real time, not the service clock: the manual clock of tests stands still.
    await new Promise((done) => setTimeout(done, pause))
  }
}
