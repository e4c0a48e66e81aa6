/**
 * A process that stored a call actor's placement (its callRef, or its answer) and died before the
 * row showed it leaves a row `ringing` with no callRef: the call is still found on the dead switch
 * from its actor and ended, by the event its actor's state needs. A row whose actor has no callRef
 * either is a placement in flight and is left alone. The real store; the actors are a fake.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CallActors } from '../../../../src/features/calls/control/actor'
import { LostCalls } from '../../../../src/features/calls/control/lost-calls'
import type { LostRecordings } from '../../../../src/features/calls/records/lost-recordings'
import { openCallTries } from '../../../../src/features/calls/records/repository'
import { openSqliteStore } from '../../../../src/store/sqlite'
import { tryRow } from '../try-row'

const dir = mkdtempSync(join(tmpdir(), 'lost-placed-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a ringing row whose actor was placed (or answered) on the dead switch is ended from the actor', async () => {
  const store = await openSqliteStore(join(dir, 'service.db'))
  const tries = await openCallTries(store)
  await tries.insert(tryRow({ id: 'call_p:1' }))
  await tries.insert(tryRow({ id: 'call_c:1', answeredAt: '2026-11-27T12:00:01.000Z' }))
  await tries.insert(tryRow({ id: 'call_f:1' }))
  await tries.insert(tryRow({ id: 'call_o:1' }))
  const stored: Record<string, { value: string; context: { callRef: string | null } }> = {
    call_p: { value: 'ringing', context: { callRef: 'SBdead-1' } },
    call_c: { value: 'connected', context: { callRef: 'SBdead-2' } },
    call_f: { value: 'ringing', context: { callRef: null } },
    call_o: { value: 'ringing', context: { callRef: 'SBalive-3' } },
  }
  const sent: [string, string][] = []
  const actors = {
    read: async (id: string) => (stored[id] ? { snapshot: stored[id] } : null),
    send: async (id: string, event: { type: string }) => void sent.push([id, event.type]),
  }
  const lost = new LostCalls({
    tries,
    // Only read and send: what dropLost asks of the call actors.
    actors: actors as unknown as CallActors,
    mediaEnded: async () => {},
    // No stream was live: nothing to finish.
    recordings: {} as LostRecordings,
  })
  const onDead = (row: { callRef: string | null }) => row.callRef?.startsWith('SBdead-') === true
  expect(await lost.dropLost(Date.parse('2026-11-27T12:00:05Z'), onDead)).toEqual({ dropped: 2, left: 0 })
  expect(sent.sort()).toEqual([
    ['call_c', 'call.ended'],
    ['call_p', 'call.refused'],
  ])
  await store.close()
})
