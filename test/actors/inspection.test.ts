import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { WebSocketServer } from 'ws'
import { createMachine } from 'xstate'
import { createInspection, type Inspection } from '../../actors/inspection'
import type { ActorRuntime } from '../../actors/runtime'
import { ManualClock } from '../../src/clock'
import { until } from '../support/until'
import { type Env, makeRuntime, openEnv, removeDir, ticketDeadlines, ticketMachine, WAIT_MS } from './support'

const T0 = Date.UTC(2026, 0, 1)

describe('inspection', () => {
  let env: Env
  let relay: WebSocketServer
  let inspection: Inspection
  let runtime: ActorRuntime
  const received: { type: string; sessionId?: string; event?: { type: string }; snapshot?: { value?: unknown } }[] = []

  beforeAll(async () => {
    env = await openEnv()
    // Stands in for the inspector relay (createInspectorServer binds every interface; tests stay on loopback).
    relay = new WebSocketServer({ host: '127.0.0.1', port: 0 })
    await new Promise<void>((resolve) => relay.once('listening', () => resolve()))
    relay.on('connection', (socket) => socket.on('message', (data) => received.push(JSON.parse(String(data)))))
    const { port } = relay.address() as { port: number }
    inspection = await createInspection({ url: `ws://127.0.0.1:${port}` })
    runtime = makeRuntime(env, new ManualClock(T0), { inspect: inspection.inspect })
    runtime.register('ticket', { machine: ticketMachine, version: 3, deadlines: ticketDeadlines })
    runtime.register('light', {
      version: 1,
      machine: createMachine({ id: 'light', initial: 'green', states: { green: { on: { next: 'red' } }, red: {} } }),
    })
    await runtime.start()
  })
  afterAll(async () => {
    await runtime.stop()
    await inspection.stop()
    await new Promise((resolve) => relay.close(resolve))
    await env.close()
    removeDir(env.dir)
  })

  test('every actor reports its creation, events and snapshots through @statelyai/inspect', async () => {
    await runtime.spawn('ticket', 'i1', { id: 'i1' })
    await runtime.send('ticket', 'i1', { type: 'arm', name: 'x', at: T0 + 5 })
    await until(
      'inspection events over the WebSocket',
      () => received.some((e) => e.type === '@xstate.event' && e.event?.type === 'arm') && received.some((e) => e.type === '@xstate.snapshot'),
      WAIT_MS,
    )
    expect(received.some((e) => e.type === '@xstate.actor')).toBe(true)
  })

  test('machine definitions are exported as JSON for the visualiser', () => {
    const all = runtime.machineDefinitions()
    expect(all.map((m) => [m.name, m.id, m.version])).toEqual([
      ['ticket', 'ticket', 3],
      ['light', 'light', 1],
    ])
    const light = runtime.machineDefinition('light')!
    expect(JSON.parse(JSON.stringify(light.config))).toMatchObject({ id: 'light', initial: 'green', states: { green: { on: { next: 'red' } } } })
    expect(light.definition).toMatchObject({ id: 'light', states: { green: {}, red: {} } })
    const ticket = runtime.machineDefinition('ticket')!
    expect(ticket.config).toMatchObject({ states: { open: { description: 'Idle; takes work.' } } })
    expect(runtime.machineDefinition('nope')).toBeNull()
  })

  test('describe shows state, context, version and deadlines, live or stored', async () => {
    await runtime.spawn('ticket', 'd1', { id: 'd1' })
    await runtime.send('ticket', 'd1', { type: 'arm', name: 'x', at: T0 + 60_000 })
    const live = await runtime.describe('ticket', 'd1')
    expect(live).toMatchObject({
      id: 'ticket:d1',
      live: true,
      owner: 'test-instance',
      value: 'open',
      version: 3,
      context: { id: 'd1', deadlines: { x: T0 + 60_000 } },
      deadlines: [{ name: 'x', at: T0 + 60_000 }],
    })
    await runtime.passivate('ticket', 'd1')
    expect(await runtime.describe('ticket:d1')).toMatchObject({ live: false, owner: null, value: 'open', deadlines: [{ name: 'x', at: T0 + 60_000 }] })
    expect(await runtime.describe('ticket:missing')).toBeNull()
    expect(await runtime.describe('unknown:d1')).toBeNull()
  })
})
