/**
 * A dead instance's placements whose try row it stored just before it died, and not their actor,
 * are younger than the "older than any placement in flight" cutoff when its switch is first found
 * dead: the switch is looked at again until the cutoff has passed that moment, so they are failed
 * too (else they stay `ringing` and unanalysed forever, and a calling campaign waiting for its calls
 * never ends). A survivor's own placement in flight is still left alone. The real store and
 * LostCalls; the call actors and the leases are fakes.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { iso, ManualClock } from '../../../../src/clock'
import type { Coordination } from '../../../../src/coordination/port'
import type { CallActors } from '../../../../src/features/calls/control/actor'
import { LostCalls } from '../../../../src/features/calls/control/lost-calls'
import { LostSwitches, SWITCH_TTL_MS } from '../../../../src/features/calls/control/lost-switches'
import type { LostRecordings } from '../../../../src/features/calls/records/lost-recordings'
import { openCallTries } from '../../../../src/features/calls/records/repository'
import { createLogger } from '../../../../src/logger'
import { openSqliteStore } from '../../../../src/store/sqlite'
import { tryRow } from '../try-row'

const dir = mkdtempSync(join(tmpdir(), 'lost-switch-unplaced-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test("a dead instance's last unplaced calls are failed once the cutoff passes its death", async () => {
  const store = await openSqliteStore(join(dir, 'service.db'))
  const tries = await openCallTries(store)
  const clock = new ManualClock(Date.parse('2026-11-27T12:00:00Z'))
  const diedAt = clock.now()
  // The dead instance's switch, registered while it lived.
  const switches = await store.collection<{ [f: string]: unknown; id: string; startedAt: number }>({ name: 'sandbox_switches', indexes: [] })
  await switches.upsert({ id: 'dead1', startedAt: diedAt - 60_000 })
  // Stored 2 s before the death, its actor never: not dialled.
  await tries.insert(tryRow({ id: 'call_late:1', createdAt: iso(diedAt - 2_000) }))

  const spawned: string[] = []
  const actors = {
    read: async () => null,
    spawn: async (id: string) => void spawned.push(id),
    send: async () => {},
  }
  const lost = new LostCalls({
    tries,
    // Only read, spawn and send: what dropLost and failUnplaced ask of the call actors.
    actors: actors as unknown as CallActors,
    mediaEnded: async () => {},
    // No stream was live: nothing to finish.
    recordings: {} as LostRecordings,
  })
  // Leases without time: the dead switch's has lapsed; only what this survivor takes is held.
  const leases = new Map<string, string>()
  const coordination = {
    acquireLease: async (name: string, owner: string) => {
      const held = leases.get(name)
      if (held && held !== owner) return false
      leases.set(name, owner)
      return true
    },
    releaseLease: async (name: string, owner: string) => {
      if (leases.get(name) === owner) leases.delete(name)
    },
    leaseOwner: async (name: string) => leases.get(name) ?? null,
    // Only the leases: what LostSwitches asks of coordination.
  } as unknown as Coordination
  const survivor = await LostSwitches.open(store, { switchId: 'live1', owner: 'inst_live1', coordination, calls: lost, clock, logger: createLogger('silent') })

  await survivor.sweep()
  // Younger than the cutoff yet: maybe a placement in flight, so left for now.
  expect(spawned).toEqual([])

  clock.advance(SWITCH_TTL_MS + 5_000)
  // The survivor's own placement, in flight now: never failed.
  await tries.insert(tryRow({ id: 'call_mine:1', createdAt: iso(clock.now() - 1_000) }))
  await survivor.sweep()
  expect(spawned).toEqual(['call_late'])
  // Done with: the dead switch is forgotten.
  expect(await switches.find({})).toEqual([])
  await store.close()
})
