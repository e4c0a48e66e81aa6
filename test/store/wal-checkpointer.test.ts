/**
 * The checkpointer thread against a file removed under its open store (a test's temp directory
 * deleted before its store closed): the thread lets go of the file and says so once, rather than
 * failing a pass every 250 ms for the rest of the process and keeping a connection to it.
 */
import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/sqlite'
import { checkpointedFiles } from '../../src/store/wal-checkpointer'
import { until } from '../support/until'
import type { Item } from './contract'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('wal checkpointer', () => {
  for (const exclusive of [false, true]) {
    test(`a file removed under its open store (${exclusive ? 'exclusive' : 'shared'}): one line, and the worker holds no connection to it`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wal-gone-'))
      dirs.push(dir)
      const file = join(dir, 'gone.db')
      const lines: string[] = []
      const spy = spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.join(' ')))
      const store = await openSqliteStore(file, { exclusive })
      try {
        const c = await store.collection<Item>({ name: 'things', indexes: [] })
        await c.insert({ id: 'before', createdAt: '2026-01-01T00:00:00.000Z' } as Item)
        expect(await checkpointedFiles()).toContain(file)
        rmSync(dir, { recursive: true, force: true })
        // A write after the removal leaves frames the worker's pass fails on (SQLITE_IOERR_FSTAT).
        await c.insert({ id: 'after', createdAt: '2026-01-01T00:00:00.000Z' } as Item)
        await until(
          'the worker to let go of the removed file',
          () => checkpointedFiles(),
          (held) => !held.includes(file),
          { withinMs: 5_000, everyMs: 50 },
        )
        // The worker reports before it answers, so every line it will ever send about the file is in.
        expect(lines.filter((line) => line.includes(file))).toEqual([`wal checkpoints of ${file} stopped: the file is gone`])
      } finally {
        await store.close()
        spy.mockRestore()
      }
    })
  }
})
