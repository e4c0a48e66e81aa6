/**
 * The API's port belongs to one process. Bun (and Elysia's listen) set SO_REUSEPORT by default, so a
 * second instance started on the same PORT bound it too and the kernel split connections between
 * the two: with different data dirs, clients saw 200 and 401 by turns. Boot claims the port without
 * SO_REUSEPORT, which any other listener on it refuses (Linux shares a port only among sockets
 * that all asked to share), and stops naming PORT when it is taken. REUSE_PORT=1 asks to share.
 */

export class PortTaken extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`${port} is taken on ${host} (another instance or program listens there); stop it or choose another PORT, or set REUSE_PORT=1 to share it on purpose`)
    this.name = 'PortTaken'
  }
}

/** Whether a listen failure is the port being held (Bun: code EADDRINUSE). */
export function isAddressInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE'
}

/**
 * Throws PortTaken when another socket listens on host:port. Called before the store and the actor
 * runtime open, so a second instance is refused before it resumes any work; the real listen (with
 * the same setting) comes moments later and reports the same way should someone take it between.
 */
export function assertPortFree(host: string, port: number): void {
  if (port === 0) return
  let probe: ReturnType<typeof Bun.serve>
  try {
    probe = Bun.serve({ hostname: host, port, reusePort: false, fetch: () => new Response(null, { status: 503 }) })
  } catch (error) {
    if (isAddressInUse(error)) throw new PortTaken(host, port)
    throw error
  }
  probe.stop(true)
}
