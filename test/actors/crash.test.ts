/**
 * Crash test: a child process with the real embedded store and local coordination spawns actors
 * with pending deadlines and is killed with SIGKILL, twice: once before the deadlines, once after
 * it delivered a batch of due timers but before acking them. After the last restart every timer
 * must have fired exactly once: no loss, no duplicate.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { openCoordination } from '../../src/coordination'
import { openStore } from '../../src/store'
import { DEADLINE_AHEAD_MS, HOLD_BATCH } from './crash-constants'
import { removeDir, sleep } from './support'

const COUNT = 200
// Bounds on each child phase: far above what they take (a second or two), under the test timeout.
const PHASE_TIMEOUT_MS = 15_000
const TEST_TIMEOUT_MS = 60_000

const CHILD = resolve(import.meta.dir, 'crash-child.ts')
const BUN = existsSync(resolve(import.meta.dir, '../../node_modules/.bin/bun')) ? resolve(import.meta.dir, '../../node_modules/.bin/bun') : process.execPath

interface Child {
  proc: ReturnType<typeof Bun.spawn>
  /** Resolves when stdout printed `marker` on a line of its own. */
  waitFor(marker: string): Promise<void>
}

function startChild(dir: string, phase: string, ...args: string[]): Child {
  const proc = Bun.spawn([BUN, CHILD, dir, phase, ...args], { stdout: 'pipe', stderr: 'pipe' })
  let out = ''
  let err = ''
  const reading = (async () => {
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) out += new TextDecoder().decode(chunk)
  })()
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(chunk)
  })()
  return {
    proc,
    async waitFor(marker) {
      const deadline = Date.now() + PHASE_TIMEOUT_MS
      while (!out.split('\n').includes(marker)) {
        if (proc.exitCode !== null && !out.split('\n').includes(marker)) {
          await reading
          if (out.split('\n').includes(marker)) return
          throw new Error(`child ${phase} exited ${proc.exitCode} before ${marker}:\n${out}\n${err}`)
        }
        if (Date.now() > deadline) throw new Error(`child ${phase} did not print ${marker}:\n${out}\n${err}`)
        await sleep(5)
      }
    },
  }
}

async function kill(child: Child): Promise<void> {
  child.proc.kill('SIGKILL')
  await child.proc.exited
}

describe('crash and restart', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'actors-crash-'))
  })
  afterAll(() => removeDir(dir))

  test(
    'every durable timer fires exactly once across SIGKILLs (before the deadlines, and between claim and ack)',
    async () => {
      const deadlineAt = Date.now() + DEADLINE_AHEAD_MS
      const first = startChild(dir, 'spawn', String(COUNT), String(deadlineAt))
      await first.waitFor('SPAWNED')
      await kill(first) // before any deadline: the spawn phase's clock is an hour short of them

      const second = startChild(dir, 'hold')
      await second.waitFor('HELD')
      await kill(second)

      const third = startChild(dir, 'run', String(COUNT))
      await third.waitFor('DONE')
      expect(await third.proc.exited).toBe(0)

      const store = await openStore({ dataDir: dir })
      const coordination = await openCoordination({ dataDir: dir })
      try {
        const fired = await store.collection<{ id: string; actorId: string; phase: string }>({ name: 'fired', indexes: [] })
        const rows = await fired.find({})
        const perActor = new Map<string, number>()
        for (const r of rows) perActor.set(r.actorId, (perActor.get(r.actorId) ?? 0) + 1)
        expect(perActor.size).toBe(COUNT) // no loss
        expect([...perActor.values()].every((n) => n === 1)).toBe(true) // no duplicate
        // The held batch fired in the killed process; its redelivery after restart did nothing.
        expect(rows.filter((r) => r.phase === 'hold')).toHaveLength(HOLD_BATCH)
        expect(rows.filter((r) => r.phase === 'run')).toHaveLength(COUNT - HOLD_BATCH)
        expect(rows.filter((r) => r.phase === 'spawn')).toHaveLength(0)
        const snapshots = await store.collection<{ id: string; status: string }>({ name: 'actor_snapshots', indexes: [] })
        expect(await snapshots.count({ status: 'done' })).toBe(COUNT)
        expect(await coordination.pendingTimers()).toBe(0)
      } finally {
        await coordination.close()
        await store.close()
      }
    },
    TEST_TIMEOUT_MS,
  )
})
