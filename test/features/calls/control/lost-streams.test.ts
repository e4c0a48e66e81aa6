/**
 * At boot with one instance every media stream died with the last process, whatever the network
 * (a carrier's call outlives the process; its stream does not): each try still marked `media: live`
 * is done, its recording finished from the raw sides left in DATA_DIR's scratch space, or its link
 * withdrawn when nothing was left there to finish. The real store, file storage and recorder files.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../../src/clock'
import type { CallActors } from '../../../../src/features/calls/control/actor'
import { LostCalls } from '../../../../src/features/calls/control/lost-calls'
import { LostRecordings } from '../../../../src/features/calls/records/lost-recordings'
import { recordingKey, recordingScratch } from '../../../../src/features/calls/records/recordings'
import { openCallTries } from '../../../../src/features/calls/records/repository'
import { openFileStorage } from '../../../../src/files'
import type { WorkspaceDoc } from '../../../../src/kernel/tenancy'
import { createLogger } from '../../../../src/logger'
import { openSqliteStore } from '../../../../src/store/sqlite'
import { MediaTokens } from '../../../../src/voice/tokens'
import { tryRow } from '../try-row'

const dir = mkdtempSync(join(tmpdir(), 'lost-streams-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('live streams left by a dead process are finished: recorded audio kept, a link with nothing behind it withdrawn', async () => {
  const store = await openSqliteStore(join(dir, 'service.db'))
  const tries = await openCallTries(store)
  const files = await openFileStorage({ dataDir: dir })
  const tokens = new MediaTokens('k'.repeat(64))
  const clock = new ManualClock(Date.parse('2026-11-27T12:00:00Z'))
  const link = { url: 'http://127.0.0.1/recordings/x', expiresAt: '2026-12-27T12:00:00.000Z', ready: false }
  // A carrier's call that ended as the process died, its recording not yet mixed; one still
  // connected whose raw audio is on another machine; one whose stream had finished.
  await tries.insert(tryRow({ id: 'call_a:1', status: 'completed', callRef: 'CA1', media: 'live', recording: link }))
  await tries.insert(tryRow({ id: 'call_b:1', status: 'connected', callRef: 'CA2', media: 'live', recording: link }))
  await tries.insert(tryRow({ id: 'call_c:1', status: 'completed', callRef: 'CA3', media: 'done', recording: { ...link, ready: true } }))
  mkdirSync(recordingScratch(dir), { recursive: true })
  writeFileSync(join(recordingScratch(dir), 'call_a-1.caller.raw'), new Uint8Array(16_000))
  writeFileSync(join(recordingScratch(dir), 'call_a-1.agent.raw'), new Uint8Array(8_000))

  const ended: string[] = []
  const recordings = new LostRecordings({
    files,
    tokens,
    clock,
    logger: createLogger('silent'),
    publicBaseUrl: 'https://api.example.com',
    dataDir: dir,
    workspace: async (id) => ({ id, plan: 'pro' }) as WorkspaceDoc,
  })
  const lost = new LostCalls({
    tries,
    recordings,
    mediaEnded: async (id) => void ended.push(id),
    // Finishing streams tells no actor anything: any use of the actors throws.
    actors: new Proxy({} as CallActors, {
      get: () => {
        throw new Error('finishing streams tells no actor anything')
      },
    }),
  })
  expect(await lost.finishStreams()).toBe(2)

  const a = await tries.get('call_a:1')
  expect(a).toMatchObject({ media: 'done', recording: { ready: true, expiresAt: '2026-12-27T12:00:00.000Z' } })
  expect(a!.recording!.url).toStartWith('https://api.example.com/recordings/call_a/1/')
  const wav = await files.stream(recordingKey('call_a', 1))
  // A second of the caller's side (8 kHz, 16-bit) behind a 44-byte header.
  expect(wav?.size).toBe(44 + 16_000)
  expect(await tries.get('call_b:1')).toMatchObject({ media: 'done', recording: null })
  expect(await tries.get('call_c:1')).toMatchObject({ media: 'done', recording: { ready: true } })
  expect(ended.sort()).toEqual(['call_a:1', 'call_b:1'])
  expect(readdirSync(recordingScratch(dir))).toEqual([])
  expect(await lost.finishStreams()).toBe(0)
  await store.close()
})
