/** The calls feed (live-feed.ts): row writes, pipeline and chart moves reach watchers, and cost nothing unwatched. */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCoordination } from '../../../../src/coordination'
import { CALL_UPDATES_CHANNEL, CallFeed, type CallUpdate, watchedTries } from '../../../../src/features/calls/live/live-feed'
import { type CallTryDoc, openCallTries } from '../../../../src/features/calls/records/repository'
import { createLogger } from '../../../../src/logger'
import { openSqliteStore } from '../../../../src/store/sqlite'
import { until } from '../../../support/until'
import { tryRow } from '../try-row'

const dir = mkdtempSync(join(tmpdir(), 'call-feed-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const logger = createLogger('silent')

const row = (id: string): CallTryDoc => tryRow({ id: `${id}:1`, callId: id, workspaceId: 'ws_a' })
/** What the feed uses of a coordination. */
type FeedChannel = ConstructorParameters<typeof CallFeed>[0]

test('each row write reaches a watcher after it lands, with the workspace and when it was made', async () => {
  const store = await openSqliteStore(join(dir, 'a.db'))
  const coordination = await openCoordination({ dataDir: join(dir, 'a') })
  const feed = new CallFeed(coordination, logger)
  const tries = watchedTries(await openCallTries(store), feed)
  const heard: CallUpdate[] = []
  const stop = await feed.subscribe((u) => void heard.push(u))
  try {
    const before = Date.now()
    await tries.insert(row('out_1'))
    await tries.update('out_1:1', { transcript: [{ speaker: 'agent', text: 'Hello', at: '2026-03-01T10:00:01.000Z' }] })
    await tries.update('out_missing:1', { status: 'connected' }) // no such row: nothing to tell
    feed.publish({ kind: 'pipeline', callId: 'out_1', workspaceId: 'ws_a', state: 'thinking' })
    feed.publish({ kind: 'actor', callId: 'out_1', state: 'connected' })
    await until(
      'four updates',
      async () => heard.length,
      (n) => n >= 4,
    )
    expect(heard.map((u) => u.kind)).toEqual(['row', 'row', 'pipeline', 'actor'])
    expect(heard[0]).toMatchObject({ kind: 'row', tryId: 'out_1:1', callId: 'out_1', workspaceId: 'ws_a' })
    expect(heard[0]!.at).toBeGreaterThanOrEqual(before)
    // The wrapped repository reads as the plain one.
    expect((await tries.get('out_1:1'))!.transcript).toHaveLength(1)
    expect(tries.name).toBe('call_tries')
  } finally {
    await stop()
    await coordination.close()
    await store.close()
  }
})

test('unwatched on one instance, nothing is published; across instances (a shared channel) it always is', async () => {
  const published: string[] = []
  const local: FeedChannel = { kind: 'local', publish: async (_c, m) => void published.push(m), subscribe: async () => async () => {} }
  const feed = new CallFeed(local, logger)
  feed.publish({ kind: 'actor', callId: 'out_1', state: 'ringing' })
  expect(published).toEqual([])
  const stop = await feed.subscribe(() => {})
  feed.publish({ kind: 'actor', callId: 'out_1', state: 'ringing' })
  expect(published).toHaveLength(1)
  await stop()
  await stop() // twice is once
  feed.publish({ kind: 'actor', callId: 'out_1', state: 'ringing' })
  expect(published).toHaveLength(1)

  const channels: string[] = []
  const redis: FeedChannel = { kind: 'redis', publish: async (c) => void channels.push(c), subscribe: async () => async () => {} }
  new CallFeed(redis, logger).publish({ kind: 'actor', callId: 'out_1', state: 'ringing' })
  expect(channels).toEqual([CALL_UPDATES_CHANNEL])
})
