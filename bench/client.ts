/** The benchmarks' HTTP client of the service under test: JSON in and out, with a bearer token. */

/** A request unanswered this long fails: set-up and the bench's reads are milliseconds on loopback, so 30 s is a service that is stuck. */
const REQUEST_TIMEOUT_MS = 30_000

export function serviceClient(base: string) {
  const request = async (method: string, path: string, auth: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json().catch(() => null)) as any }
  }
  /** A set-up step: anything but the expected status stops the run. */
  const must = async (expected: number, method: string, path: string, auth: string, body?: unknown) => {
    const r = await request(method, path, auth, body)
    if (r.status !== expected) throw new Error(`set-up: ${method} ${path} answered ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  return { request, must }
}

/** `p`, or a failure naming `what` once `ms` have passed without it. */
export const withinMs = <T>(ms: number, what: string, p: Promise<T>) => Promise.race([p, Bun.sleep(ms).then(() => Promise.reject(new Error(`${what}: nothing after ${ms / 1000} s`)))])
