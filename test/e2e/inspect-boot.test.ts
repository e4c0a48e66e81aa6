/**
 * `INSPECT=1`: the service prints where the actor inspector is, on the port INSPECT_PORT names
 * (8080 when unset); a bad INSPECT_PORT, or one another program holds, stops boot naming it.
 * The service runs as `npm start` runs it (`bun src/index.ts`), its output read as printed.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/config'

const ROOT = join(import.meta.dir, '..', '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const dirs: string[] = []

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A port nothing listens on now (the OS's pick, released). */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/** Starts the service with `env`; answers once it printed its start lines, or ended. */
async function boot(env: Record<string, string>): Promise<{ out: string; err: string; code: number | null; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'inspect-boot-'))
  dirs.push(dir)
  const child = Bun.spawn([BUN, 'src/index.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  const deadline = Date.now() + 30_000
  let exiting = false
  // The start lines are printed together, the demo workspace's last.
  while (!out.includes('demo workspace') && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), child.exited.then(() => null)])
    if (!chunk || chunk.done) {
      exiting = true
      break
    }
    out += decoder.decode(chunk.value)
  }
  reader.releaseLock()
  // Its output ended: it is exiting, so wait for the code (not a fixed 50 ms that a busy machine may outlast).
  const ended = exiting ? await child.exited : null
  const err = ended === null ? '' : await new Response(child.stderr).text()
  return {
    out,
    err,
    code: ended,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

describe('INSPECT_PORT in the configuration', () => {
  test('8080 when unset, the number given otherwise', () => {
    expect(loadConfig({ INSPECT: '1' }).inspectPort).toBe(8080)
    expect(loadConfig({ INSPECT: '1', INSPECT_PORT: '9231' }).inspectPort).toBe(9231)
  })

  test('a value that is not a port stops boot naming INSPECT_PORT', () => {
    for (const bad of ['abc', '0', '65536', '80.5', '-1']) {
      const attempt = () => loadConfig({ INSPECT: '1', INSPECT_PORT: bad })
      expect(attempt).toThrow(ConfigError)
      expect(attempt).toThrow(`INSPECT_PORT: must be a whole number from 1 to 65535 (got "${bad}")`)
    }
  })

  test('the API’s own port is refused while INSPECT starts a relay, and allowed when it connects to one', () => {
    expect(() => loadConfig({ INSPECT: '1', PORT: '8080' })).toThrow("INSPECT_PORT: is 8080, the API's PORT too")
    expect(() => loadConfig({ INSPECT: '1', PORT: '9000', INSPECT_PORT: '9000' })).toThrow('INSPECT_PORT')
    expect(loadConfig({ INSPECT: '1', PORT: '8080', INSPECT_URL: 'ws://127.0.0.1:9999' }).port).toBe(8080)
    expect(loadConfig({ PORT: '8080' }).port).toBe(8080)
  })
})

describe('INSPECT=1 at boot', () => {
  test('prints the inspector’s address, and the relay answers there', async () => {
    const port = await freePort()
    const service = await boot({ INSPECT: '1', INSPECT_PORT: String(port) })
    try {
      const line = service.out.split('\n').find((l) => l.startsWith('actor inspector: '))
      const api = service.out.match(/listening on (\S+)/)![1]
      const charts = `${api}/console/app#/charts`
      expect(line).toBe(
        `actor inspector: http://localhost:${port} (the relay listens on every interface, port ${port}); its page embeds https://stately.ai/inspect and needs the internet: offline, use the console app's state charts at ${charts}`,
      )
      // The relay's page: it embeds the Stately inspector, feeds it from the relay on this port,
      // and says it needs the internet, linking to the charts that do not.
      const page = await fetch(`http://127.0.0.1:${port}/`)
      expect(page.status).toBe(200)
      const html = await page.text()
      expect(html).toContain(`':${port}'`)
      expect(html).toContain('needs the internet')
      expect(html).toContain(`<a href="${charts}">the console app's state charts</a>`)
      expect(html).toContain('<iframe id="inspector" title="Stately inspector" src="https://stately.ai/inspect">')
    } finally {
      await service.stop()
    }
  }, 60_000)

  test('a port another program holds stops boot naming INSPECT_PORT (exit 2)', async () => {
    const holder: Server = createServer()
    await new Promise<void>((resolve) => holder.listen(0, resolve))
    const { port } = holder.address() as { port: number }
    try {
      const service = await boot({ INSPECT: '1', INSPECT_PORT: String(port) })
      expect(service.code).toBe(2)
      expect(service.err).toContain(`configuration error: INSPECT_PORT: port ${port} is in use by another program`)
      expect(service.out).not.toContain('listening on')
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  }, 60_000)

  test('without INSPECT, no inspector line', async () => {
    const service = await boot({})
    try {
      expect(service.out).toContain('listening on')
      expect(service.out).not.toContain('actor inspector')
    } finally {
      await service.stop()
    }
  }, 60_000)
})
