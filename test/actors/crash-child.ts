/**
 * The process the crash test kills. Usage:
 *   bun test/actors/crash-child.ts <dataDir> <phase> [count] [deadlineAt]
 * phases (spawn on the system clock, hold and run on a clock LATER_CLOCK_AHEAD_MS ahead of it):
 *   spawn  spawn <count> waiters whose deadline is <deadlineAt> (epoch ms), print SPAWNED, wait
 *   hold   deliver due timers, but stop before acking: once a whole claimed batch has been
 *          delivered (and each waiter's effect has run), print HELD and hang (the test kills it)
 *   run    run normally until every waiter is done and no timer is left, print DONE, exit
 * It uses the real embedded store and the local coordination adapter in <dataDir>, as the
 * service does with DATA_DIR.
 */
import pino from 'pino'
import { fromPromise, setup } from 'xstate'
import { ActorRuntime } from '../../actors/runtime'
import { type Clock, systemClock } from '../../src/clock'
import { openCoordination } from '../../src/coordination'
import { randomId } from '../../src/ids'
import { openStore } from '../../src/store'
import { CLAIM_LEASE_MS, HOLD_BATCH, LATER_CLOCK_AHEAD_MS } from './crash-constants'

// How often the hold hook and the run phase look at the store; small next to the deadlines.
const POLL_MS = 10

const [dataDir, phase, countArg, deadlineArg] = process.argv.slice(2)
if (!dataDir || !phase) throw new Error('usage: crash-child.ts <dataDir> <phase> [count] [deadlineAt]')

const clock: Clock = phase === 'spawn' ? systemClock : { ...systemClock, now: () => Date.now() + LATER_CLOCK_AHEAD_MS }
const store = await openStore({ dataDir })
const coordination = await openCoordination({ dataDir })
const fired = await store.collection<{ id: string; actorId: string; phase: string }>({ name: 'fired', indexes: [] })
const syncs = await store.collection<{ id: string }>({ name: 'syncs', indexes: [] })

/** Waits for its deadline, then appends its id to `fired` (an invoked effect), then is done. */
const waiter = setup({
  types: {
    context: {} as { id: string; dueAt: number },
    input: {} as { id: string; dueAt: number },
    events: {} as { type: 'timer.due'; at: number; name?: string },
  },
  actors: {
    append: fromPromise<void, { id: string }>(async ({ input }) => {
      await fired.insert({ id: randomId(), actorId: input.id, phase })
    }),
  },
}).createMachine({
  id: 'waiter',
  context: ({ input }) => ({ id: input.id, dueAt: input.dueAt }),
  initial: 'waiting',
  states: {
    waiting: {
      on: { 'timer.due': { guard: ({ context, event }) => event.at >= context.dueAt, target: 'firing' } },
    },
    firing: {
      invoke: { src: 'append', input: ({ context }) => ({ id: context.id }), onDone: 'done' },
    },
    done: { type: 'final' },
  },
})

let held = 0
const runtime = new ActorRuntime({
  store,
  coordination,
  clock,
  logger: pino({ level: 'warn' }, pino.destination(2)),
  instanceId: `crash-child-${process.pid}`,
  timers: {
    batch: HOLD_BATCH,
    claimLeaseMs: CLAIM_LEASE_MS,
    beforeAck:
      phase === 'hold'
        ? async (timer) => {
            const id = (timer.payload as { id: string }).id
            while ((await runtime.read('waiter', id))?.status !== 'done') await Bun.sleep(POLL_MS)
            // A read on the writer's connection already sees a group-commit batch that is still
            // open (src/store/group-commit.ts); a write of our own resolves only once that batch has
            // committed, so HELD means the `done` snapshot is on disk, not merely visible here.
            await syncs.upsert({ id: `held-${id}` })
            if (++held === HOLD_BATCH) console.log('HELD')
            await new Promise(() => {}) // never acks: the test kills us here
          }
        : undefined,
  },
})
runtime.register('waiter', {
  machine: waiter,
  version: 1,
  deadlines: (snap) => (snap.value === 'waiting' ? [{ name: 'due', at: snap.context.dueAt }] : []),
})
await runtime.start()
// A pending promise does not keep the process alive; this does, until the test kills it.
setInterval(() => {}, 60_000)

if (phase === 'spawn') {
  const count = Number(countArg)
  const dueAt = Number(deadlineArg)
  for (let i = 0; i < count; i++) await runtime.spawn('waiter', `w${i}`, { id: `w${i}`, dueAt })
  console.log('SPAWNED')
} else if (phase === 'run') {
  const count = Number(countArg)
  for (;;) {
    const done = (await runtime.list('waiter', { state: 'done' })).length
    if (done === count && (await coordination.pendingTimers()) === 0) break
    await Bun.sleep(POLL_MS)
  }
  await runtime.stop()
  await coordination.close()
  await store.close()
  console.log('DONE')
  process.exit(0)
}
