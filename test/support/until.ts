/**
 * The suite's one poller: every "wait until this holds" in the tests goes through here, so a
 * timeout reads the same everywhere and names what was awaited (and the last value seen).
 *
 * Bounds: 2 s by default (loopback answers take milliseconds); real-time media waits (a call's
 * spoken turns) and child processes pass their own. Checks run 10 ms apart unless `everyMs` says.
 */
export interface Poll {
  /** The most to wait, ms. */
  withinMs?: number
  /** The gap between two checks, ms. */
  everyMs?: number
}

const DEFAULT_WITHIN_MS = 2_000
const DEFAULT_EVERY_MS = 10

const bounds = (p: number | Poll | undefined): Required<Poll> =>
  typeof p === 'number' ? { withinMs: p, everyMs: DEFAULT_EVERY_MS } : { withinMs: p?.withinMs ?? DEFAULT_WITHIN_MS, everyMs: p?.everyMs ?? DEFAULT_EVERY_MS }

const shown = (v: unknown): string => {
  try {
    return JSON.stringify(v)?.slice(0, 500) ?? String(v)
  } catch {
    return String(v)
  }
}

/** Whether `read`'s value counts as an answer when no `ok` is given. */
const answered = (v: unknown): boolean => v !== undefined && v !== null && v !== false

/**
 * Reads with `read` until `ok` holds of the value, and answers that value. Without `ok`, until
 * `read` answers something (not undefined, null or false): a check that is true, a row that exists.
 */
export function until<T>(what: string, read: () => T | Promise<T>, ok: (v: T) => boolean, poll?: number | Poll): Promise<T>
export function until<T>(what: string, read: () => T | undefined | null | false | Promise<T | undefined | null | false>, poll?: number | Poll): Promise<T>
export async function until<T>(what: string, read: () => unknown, okOrPoll?: ((v: T) => boolean) | number | Poll, poll?: number | Poll): Promise<T> {
  const ok = typeof okOrPoll === 'function' ? (okOrPoll as (v: unknown) => boolean) : answered
  const { withinMs, everyMs } = bounds(typeof okOrPoll === 'function' ? poll : okOrPoll)
  const deadline = Date.now() + withinMs
  for (;;) {
    const v = await read()
    // cast: the overloads tie `read`'s answer to T; an answered value is the T the caller asked for
    if (ok(v)) return v as T
    if (Date.now() >= deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}: last ${shown(v)}`)
    await Bun.sleep(everyMs)
  }
}
