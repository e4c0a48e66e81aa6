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

/** Reads with `read` until `ok` holds of the value; answers that value. */
export async function until<T>(what: string, read: () => T | Promise<T>, ok: (v: T) => boolean, poll?: number | Poll): Promise<T> {
  const { withinMs, everyMs } = bounds(poll)
  const deadline = Date.now() + withinMs
  for (;;) {
    const v = await read()
    if (ok(v)) return v
    if (Date.now() >= deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}: last ${shown(v)}`)
    await Bun.sleep(everyMs)
  }
}

/** Checks until `check` answers something (not undefined, null or false); answers it. */
export async function eventually<T>(what: string, check: () => T | undefined | null | false | Promise<T | undefined | null | false>, poll?: number | Poll): Promise<T> {
  return (await until(what, check, (v) => v !== undefined && v !== null && v !== false, poll)) as T
}

/** Whether `check` comes to hold within the bound (false rather than a throw when it does not). */
export async function holdsWithin(check: () => boolean | Promise<boolean>, poll?: number | Poll): Promise<boolean> {
  try {
    await until('', check, (v) => v, poll)
    return true
  } catch {
    return false
  }
}
