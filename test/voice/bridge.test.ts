/**
 * The media bridge's socket timers, at their real timings on a stepped clock: a stream that sends
 * nothing at all, or `start` and then nothing, is an error the other side is told of by an application close code
 * (4408), and its call ends `lost`; a stream that stops normally closes 1000.
 */
import { expect, test } from 'bun:test'
import { ManualClock } from '../../src/clock'
import { CLOSE, MEDIA_IDLE_MS, type MediaCalls, MediaStream, START_TIMEOUT_MS } from '../../src/voice/bridge'
import type { OutboundFrame } from '../../src/voice/frames'
import { serializerFor } from '../../src/voice/serializers'
import { ProtocolError, type SerializerFactory } from '../../src/voice/serializers/port'
import { TwilioSerializer } from '../../src/voice/serializers/twilio'

const start = {
  event: 'start',
  sequenceNumber: '1',
  start: { streamSid: 'MZ1', accountSid: 'AC1', callSid: 'CA1', tracks: ['inbound'], customParameters: {}, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
  streamSid: 'MZ1',
}

function harness() {
  const closes: { code: number; reason: string }[] = []
  const ended: string[] = []
  const socket = { send: () => 1, close: (code = 1005, reason = '') => void closes.push({ code, reason }) }
  const calls: MediaCalls = {
    checkUpgrade: () => null,
    refusal: async () => null,
    attach: async () => ({ call: { frame: () => {}, drained: () => {}, ended: (how, detail) => void ended.push(`${how}: ${detail ?? ''}`) } }),
  }
  const clock = new ManualClock(0)
  const stream = new MediaStream(socket, calls, 'out_1', 'token', { startMs: START_TIMEOUT_MS, idleMs: MEDIA_IDLE_MS }, undefined, clock)
  return { stream, closes, ended, clock }
}

/** Lets the stream's attach settle; no time passes on the stream's clock. */
const settled = async () => {
  for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r))
}

test('start, then nothing: closed with 4408 (not 1000) once the idle wait has passed, and the call ends lost', async () => {
  const { stream, closes, ended, clock } = harness()
  stream.message(JSON.stringify(start))
  await settled()
  clock.advance(MEDIA_IDLE_MS - 1)
  expect(closes).toEqual([])
  clock.advance(1)
  const reason = `no media for ${MEDIA_IDLE_MS / 1000} s`
  expect(closes).toEqual([{ code: CLOSE.silent, reason }])
  expect(CLOSE.silent).toBeGreaterThanOrEqual(4000)
  expect(ended).toEqual([`lost: ${reason}`])
})

test('no start at all: closed as a policy breach once the start wait has passed', () => {
  const { closes, clock } = harness()
  clock.advance(START_TIMEOUT_MS - 1)
  expect(closes).toEqual([])
  clock.advance(1)
  expect(closes).toEqual([{ code: CLOSE.policy, reason: 'no "start" message in time' }])
})

test('a stream that stops is a normal closure (1000)', async () => {
  const { stream, closes, ended } = harness()
  stream.message(JSON.stringify(start))
  await Bun.sleep(10)
  stream.message(JSON.stringify({ event: 'stop', sequenceNumber: '2', streamSid: 'MZ1', stop: { accountSid: 'AC1', callSid: 'CA1' } }))
  expect(closes).toEqual([{ code: 1000, reason: 'stream stopped' }])
  expect(ended).toEqual(['stop: '])
})

test("another provider's serializer is one value passed in: the bridge speaks its protocol, the pipeline sees the same frames", async () => {
  // A line that speaks plain "verb:argument" text (no JSON), 8 kHz 16-bit PCM in hex.
  const serializer: SerializerFactory = () => ({
    maxMessageBytes: 1_000,
    deserialize(message) {
      const [verb, arg = ''] = String(message).split(':')
      if (verb === 'hello') return { kind: 'start', streamId: arg, callRef: null, customParameters: {}, encoding: 'audio/l16', sampleRate: 8_000 }
      if (verb === 'pcm') return { kind: 'audio', pcm: new Int16Array(arg.length / 4).fill(7), sampleRate: 8_000, chunk: 0, timestamp: 0 }
      if (verb === 'bye') return { kind: 'stop' }
      throw new ProtocolError(`unknown verb "${verb}"`)
    },
    serialize: (frame) => (frame.kind === 'clear' ? 'hush' : null),
  })
  const frames: string[] = []
  const sent: string[] = []
  const closes: { code: number; reason: string }[] = []
  let io: { send(f: OutboundFrame): boolean } | null = null
  const socket = { send: (m: string) => sent.push(m), close: (code = 1005, reason = '') => void closes.push({ code, reason }) }
  const calls: MediaCalls = {
    checkUpgrade: () => null,
    refusal: async () => null,
    attach: async (_id, _token, _info, line) => {
      io = line
      return { call: { frame: (f) => void frames.push(f.kind), drained: () => {}, ended: () => {} } }
    },
  }
  const stream = new MediaStream(socket, calls, 'out_1', 'token', { startMs: 1_000, idleMs: 1_000 }, serializer)
  stream.message('hello:S1')
  await Bun.sleep(5)
  stream.message('pcm:00000000')
  io!.send({ kind: 'clear' })
  expect(frames).toEqual(['audio'])
  expect(sent).toEqual(['hush'])
  stream.message('x'.repeat(1_001))
  expect(closes).toEqual([{ code: CLOSE.tooBig, reason: 'message over 1000 bytes' }])
})

test("the bridge's protocol is chosen by the telephony provider's name; an unknown provider is refused at build, named", () => {
  expect(serializerFor('twilio')()).toBeInstanceOf(TwilioSerializer)
  // The sandbox network (its callees, the console, browsers) speaks the same wire.
  expect(serializerFor('sandbox')()).toBeInstanceOf(TwilioSerializer)
  expect(() => serializerFor('vonage')).toThrow('no media serializer for telephony provider "vonage"')
})
