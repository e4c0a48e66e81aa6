/**
 * Polls `read` until `ok` holds, 10 ms apart. 2 s at most by default (loopback answers take
 * milliseconds); real-time media waits (a call's spoken turns) pass their own bound.
 */
export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, withinMs = 2_000): Promise<T> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const v = await read()
    if (ok(v)) return v
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}
