/** Polls `read` until `ok` holds (10 ms apart, 2 s at most: loopback answers take milliseconds). */
export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read()
    if (ok(v)) return v
    await Bun.sleep(10)
  }
  throw new Error(`timed out waiting for ${what}`)
}
