/**
 * The media bridge's socket timers, on short timings (the real ones are 10 s): a stream that sends
 * `start` and then nothing is an error the other side is told of by an application close code
 * (4408), and its call ends `lost`; a stream that stops normally closes 1000.
 */
import { expect, test } from 'bun:test'
import { CLOSE, type MediaCalls, MediaStream } from '../../src/media/bridge'
import type { OutboundFrame } from '../../src/media/frames'
import { serializerFor } from '../../src/media/serializers'
import { ProtocolError, type SerializerFactory } from '../../src/media/serializers/port'
import { TwilioSerializer } from '../../src/media/serializers/twilio'

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
  const stream = new MediaStream(socket, calls, 'out_1', 'token', { startMs: 1_000, idleMs: 100 })
  return { stream, closes, ended }
}

test('start, then nothing: closed with 4408 (not 1000) and the call ends lost', async () => {
  const { stream, closes, ended } = harness()
  stream.message(JSON.stringify(start))
  await Bun.sleep(250)
  expect(closes).toEqual([{ code: CLOSE.silent, reason: 'no media for 0.1 s' }])
  expect(CLOSE.silent).toBeGreaterThanOrEqual(4000)
  expect(ended).toEqual(['lost: no media for 0.1 s'])
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
