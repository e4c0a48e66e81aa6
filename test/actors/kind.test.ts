/**
 * defineActorKind on the real runtime and store: a kind declared as data binds its port's effects
 * (a failure logged with the kind, effect and subject, and read by the chart as an EffectError
 * carrying the service-clock instant), hands each stored change and emitted event to the port, and
 * gives its typed view before it is registered (refused until then).
 */
import { afterEach, expect, test } from 'bun:test'
import { assign, emit, fromPromise, setup } from 'xstate'
import type { EffectError } from '../../actors/effects'
import { UnknownKindError } from '../../actors/errors'
import { defineActorKind } from '../../actors/kind'
import { ManualClock } from '../../src/clock'
import { captureLogger, type Env, makeRuntime, openEnv, removeDir } from './support'

interface SendInput {
  id: string
  attempt: number
}

const parcelMachine = setup({
  types: {
    context: {} as { id: string; attempt: number; sentAt: number | null; failedAt: number | null; error: string | null },
    events: {} as { type: 'send' },
    input: {} as { id: string },
    emitted: {} as { type: 'parcel.sent'; id: string },
  },
  actors: {
    sendParcel: fromPromise<{ at: number }, SendInput>(async () => {
      throw new Error('provided by parcelKind')
    }),
  },
}).createMachine({
  id: 'parcel',
  context: ({ input }) => ({ id: input.id, attempt: 0, sentAt: null, failedAt: null, error: null }),
  initial: 'waiting',
  states: {
    waiting: { on: { send: { target: 'sending', actions: assign({ attempt: ({ context }) => context.attempt + 1 }) } } },
    sending: {
      invoke: {
        src: 'sendParcel',
        input: ({ context }) => ({ id: context.id, attempt: context.attempt }),
        onDone: { target: 'sent', actions: [assign({ sentAt: ({ event }) => event.output.at }), emit(({ context }) => ({ type: 'parcel.sent' as const, id: context.id }))] },
        onError: {
          target: 'waiting',
          actions: assign(({ event }) => {
            const error = event.error as EffectError
            return { failedAt: error.at, error: error.message }
          }),
        },
      },
    },
    sent: { type: 'final' },
  },
})

interface ParcelPort {
  send(input: SendInput): Promise<{ at: number }>
  project(id: string, sentAt: number | null): Promise<void>
  publish(id: string, type: string, eventId: string): Promise<void>
}

const parcelKind = defineActorKind({
  kind: 'parcel',
  machine: parcelMachine,
  version: 1,
  subject: (input: SendInput) => `${input.id}#${input.attempt}`,
  provide: (port: ParcelPort, { effect }) => ({ actors: { sendParcel: effect('sendParcel', (input: SendInput) => port.send(input)) } }),
  persisted: (port, id, snapshot) => port.project(id, snapshot.context.sentAt),
  emitted: (port, id, event, eventId) => port.publish(id, event.type, eventId),
})

let env: Env | null = null
afterEach(async () => {
  await env?.close()
  if (env) removeDir(env.dir)
  env = null
})

test("a defined kind binds its port's effects, projections and emitted events", async () => {
  env = await openEnv()
  const clock = new ManualClock(1_000)
  const { logger, lines } = captureLogger()
  const runtime = makeRuntime(env, clock, { logger })
  const early = parcelKind.actors(runtime)
  await expect(early.spawn('p1', { id: 'p1' })).rejects.toBeInstanceOf(UnknownKindError)

  let fail = true
  const projected: (number | null)[] = []
  const published: string[] = []
  const actors = parcelKind.register(runtime, {
    async send() {
      if (fail) throw new Error('the carrier is closed')
      return { at: clock.now() }
    },
    project: async (_id, sentAt) => void projected.push(sentAt),
    publish: async (id, type, eventId) => void published.push(`${id} ${type} ${eventId}`),
  })
  await runtime.start()
  try {
    await early.spawn('p1', { id: 'p1' })
    clock.advance(1_000)
    await actors.send('p1', { type: 'send' })
    const failed = await actors.settle('p1')
    expect(failed.state).toBe('waiting')
    expect(failed.snapshot).toMatchObject({ context: { failedAt: 2_000, error: 'the carrier is closed' } })
    expect(lines.find((l) => l.msg === 'actor effect failed')).toMatchObject({ actor: 'parcel', effect: 'sendParcel', subject: 'p1#1' })

    fail = false
    clock.advance(1_000)
    await actors.send('p1', { type: 'send' })
    const sent = await actors.settle('p1')
    expect(sent.state).toBe('sent')
    expect(projected.at(-1)).toBe(3_000)
    expect(published).toEqual(['p1 parcel.sent parcel:p1:1'])
  } finally {
    await runtime.stop()
  }
})
