/**
 * Starts a throwaway redis-server for a test suite: loopback only, a free port, no persistence.
 * The binary is `redis-server` on PATH (CI installs it with apt), or $REDIS_SERVER; suites that use
 * it run under `describeWithRedis` (system-binary.ts), which skips them where it is absent.
 */
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { REDIS } from './system-binary'

// redis-server is ready in milliseconds on a laptop; 10 s leaves room for a loaded CI runner
// while staying under the 20 s per-hook timeout in bunfig.toml.
const READY_TIMEOUT_MS = 10_000
// Poll interval while waiting for PONG: small next to the startup time, cheap in connections.
const READY_POLL_MS = 25
// One probe connection waits this long for PONG before the next try; a live local server answers
// in well under a millisecond.
const PING_TIMEOUT_MS = 500
// How long redis-server gets to exit on SIGTERM before SIGKILL; it exits at once with no
// persistence configured, so 3 s only matters if it hangs.
const STOP_GRACE_MS = 3_000
// Another process can take the free port between our probe and redis-server binding it.
const START_ATTEMPTS = 3

export interface RedisServer {
  url: string
  stop(): Promise<void>
  /** kill -9: the server dies at once and, with no persistence, everything it held is gone. */
  crash(): Promise<void>
  /** Starts it again on the same port, empty (after crash or stop). */
  restart(): Promise<void>
  /** SIGSTOP pauses the server (its socket stays open, nothing answers); SIGCONT resumes it. */
  pause(paused: boolean): void
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))))
    })
  })
}

/** True when something on the port answers PING with PONG. */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    let reply = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(PING_TIMEOUT_MS, () => done(false))
    socket.once('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk.toString()
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
    })
  })
}

/** One redis-server process on `port`; the server object keeps the newest one. */
interface Started {
  stop(): Promise<void>
  crash(): Promise<void>
  pause(paused: boolean): void
}

async function startOnce(): Promise<RedisServer> {
  const port = await freePort()
  let current = await startOn(port)
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => current.stop(),
    crash: () => current.crash(),
    pause: (paused) => current.pause(paused),
    restart: async () => {
      await current.stop()
      current = await startOn(port)
    },
  }
}

async function startOn(port: number): Promise<Started> {
  const binary = REDIS.path ?? 'redis-server'
  const proc = Bun.spawn([binary, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()], { stdout: 'pipe', stderr: 'pipe' })
  // Drained in the background so a chatty server never blocks on a full pipe; shown on failure.
  const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]).then((parts) => parts.join(''))

  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    // A paused server would not see the SIGTERM until resumed.
    proc.kill('SIGCONT')
    proc.kill('SIGTERM')
    const exited = await Promise.race([proc.exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)])
    if (!exited) {
      proc.kill('SIGKILL')
      await proc.exited
    }
  }

  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) {
      throw new Error(`redis-server exited with ${proc.exitCode} on port ${port}:\n${await output}`)
    }
    // The exit check after PONG guards against another server that took the port first.
    if ((await pingOnce(port)) && proc.exitCode === null) {
      const crash = async () => {
        if (proc.exitCode !== null || proc.signalCode !== null) return
        proc.kill('SIGKILL')
        await proc.exited
      }
      const pause = (paused: boolean) => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill(paused ? 'SIGSTOP' : 'SIGCONT')
      }
      return { stop, crash, pause }
    }
    await sleep(READY_POLL_MS)
  }
  await stop()
  throw new Error(`redis-server did not answer PING on port ${port} within ${READY_TIMEOUT_MS} ms:\n${await output}`)
}

export async function startRedis(): Promise<RedisServer> {
  let lastError: unknown
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    try {
      return await startOnce()
    } catch (err) {
      lastError = err
    }
  }
  throw lastError
}
