/**
 * Shared pieces of the actor runtime tests: a small machine of our own (not the product's charts),
 * a real SQLite store and local coordination in a temp dir, a logger whose lines the test can read.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { assign, fromPromise, setup } from 'xstate'
import { ActorRuntime, type ActorRuntimeOptions } from '../../actors/runtime'
import type { ActorKindSpec } from '../../actors/types'
import type { Clock } from '../../src/clock'
import { openLocalCoordination } from '../../src/coordination/local'
import type { Coordination } from '../../src/coordination/port'
import type { Logger } from '../../src/logger'
import type { DocumentStore } from '../../src/store/port'
import { openSqliteStore } from '../../src/store/sqlite'

// until()'s bound for an asynchronous outcome: 5 s is far above the few milliseconds these take on a
// loaded CI runner and well under the 20 s per-test timeout in bunfig.toml.
export const WAIT_MS = 5_000

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface TicketContext {
  id: string
  /** Numbers pushed, in the order the machine saw them. */
  log: number[]
  /** Named deadlines (absolute instants). */
  deadlines: Record<string, number>
  /** Deadline names in the order they fired. */
  fired: string[]
  worked: number
}

export type TicketEvent =
  | { type: 'push'; n: number }
  | { type: 'arm'; name: string; at: number }
  | { type: 'disarm'; name: string }
  | { type: 'timer.due'; at: number; name?: string }
  | { type: 'work' }
  | { type: 'close' }
  | { type: 'ping' }

/** A ticket: collects numbers, keeps named deadlines, can run one effect, can be closed. */
export const ticketMachine = setup({
  types: { context: {} as TicketContext, events: {} as TicketEvent, input: {} as { id: string } },
  actors: { effect: fromPromise(async () => 0) },
  actions: { onFired: () => {} },
  guards: {
    // The runtime's contract with machines: ignore early, stale and repeated wake-ups.
    deadlineDue: ({ context, event }) => event.type === 'timer.due' && typeof event.name === 'string' && context.deadlines[event.name] !== undefined && event.at >= context.deadlines[event.name],
  },
}).createMachine({
  id: 'ticket',
  context: ({ input }) => ({ id: input.id, log: [], deadlines: {}, fired: [], worked: 0 }),
  initial: 'open',
  on: {
    push: { actions: assign({ log: ({ context, event }) => [...context.log, event.n] }) },
    arm: { actions: assign({ deadlines: ({ context, event }) => ({ ...context.deadlines, [event.name]: event.at }) }) },
    disarm: {
      actions: assign({
        deadlines: ({ context, event }) => Object.fromEntries(Object.entries(context.deadlines).filter(([k]) => k !== event.name)),
      }),
    },
    'timer.due': {
      guard: 'deadlineDue',
      actions: [
        assign(({ context, event }) => {
          const name = (event as { name: string }).name
          const rest = Object.fromEntries(Object.entries(context.deadlines).filter(([k]) => k !== name))
          return { deadlines: rest, fired: [...context.fired, name] }
        }),
        'onFired',
      ],
    },
  },
  states: {
    open: {
      description: 'Idle; takes work.',
      on: { work: 'working', close: 'closed' },
    },
    working: {
      description: 'An effect is running.',
      invoke: {
        src: 'effect',
        onDone: { target: 'open', actions: assign({ worked: ({ context }) => context.worked + 1 }) },
        onError: 'open',
      },
    },
    closed: { type: 'final', description: 'Finished for good.' },
  },
})

export const ticketDeadlines: ActorKindSpec<typeof ticketMachine>['deadlines'] = (snap) => Object.entries(snap.context.deadlines).map(([name, at]) => ({ name, at }))

/** A promise a test resolves by hand (to hold an effect in flight). */
export function gate<T = number>() {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => (open = resolve))
  return { promise, open }
}

export interface LogLines {
  logger: Logger
  lines: { level: number; msg: string; [k: string]: unknown }[]
}

/** A pino logger writing into an array (debug and up), for asserting what was reported. */
export function captureLogger(): LogLines {
  const lines: LogLines['lines'] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}

export interface Env {
  dir: string
  store: DocumentStore
  coordination: Coordination
  close(): Promise<void>
}

/** A fresh data dir with the real embedded store and local coordination (reopenable). */
export async function openEnv(dir = mkdtempSync(join(tmpdir(), 'actors-test-'))): Promise<Env> {
  const store = await openSqliteStore(join(dir, 'service.db'))
  const coordination = await openLocalCoordination(join(dir, 'coordination.db'))
  return {
    dir,
    store,
    coordination,
    async close() {
      await coordination.close()
      await store.close()
    },
  }
}

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true })

export function makeRuntime(env: Pick<Env, 'store' | 'coordination'>, clock: Clock, extra: Partial<ActorRuntimeOptions> = {}): ActorRuntime {
  return new ActorRuntime({
    store: env.store,
    coordination: env.coordination,
    clock,
    logger: extra.logger ?? pino({ level: 'silent' }),
    instanceId: extra.instanceId ?? 'test-instance',
    ...extra,
  })
}
