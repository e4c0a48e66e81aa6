/**
 * The media bridge's socket timers, on short timings (the real ones are 10 s): a stream that sends
 * `start` and then nothing is an error the other side is told of by an application close code
 * (4408), and its call ends `lost`; a stream that stops normally closes 1000.
 */
import { expect, test } from 'bun:test'
import { CLOSE, type MediaCalls, MediaStream } from '../../src/media/bridge'

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
