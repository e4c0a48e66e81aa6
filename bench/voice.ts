/**
 * bench:voice — the voice pipeline (src/voice/session.ts) with zero-latency fake providers, in one
 * process, driven the way the media bridge drives it (frames in, frames out), without sockets.
 *
 *   bun bench/voice.ts                 (BENCH_MAX_CALLS=600 to search higher)
 *
 * Prints:
 *  (a) pipeline overhead: from the moment endpointing ends the caller's utterance to the first
 *      agent media frame handed to the socket, p50/p95 over 200 turns (target p95 ≤ 15 ms);
 *  (b) concurrency: the most calls one process carries with 20 ms frames both ways (50 frames/s
 *      in, 50 out: MEDIA_CHUNK_MS=20) while outbound frame jitter p99 stays ≤ 20 ms — with the VAD
 *      stubbed (energy detector) and with Silero running (targets ≥ 300 and ≥ 100);
 *  (c) memory per live call: heap growth over 200 live calls / 200 (target ≤ 2 MB).
 * The WebSocket layer is not in these numbers (Bun's uWebSockets sends a 300-byte frame in
 * microseconds); a loopback client in the same process would measure itself.
 */

import { OPENAI_STT_CAPABILITIES } from '../src/providers/stt/openai'
import type { OutboundFrame } from '../src/voice/frames'
import type { SttSession } from '../src/voice/ports/stt'
import type { TextToSpeech } from '../src/voice/ports/tts'
import { type CallLine, VoiceSession } from '../src/voice/session'
import { EnergyVad, type VoiceActivity, voiceActivity } from '../src/voice/vad'
import { inertLine } from '../test/support/call-line'
import { percentile } from './stats'

const FRAME = 160
const speech = () => {
  const f = new Int16Array(FRAME)
  for (let i = 0; i < FRAME; i++) f[i] = Math.round(6000 * Math.sin(i / 3) * (1 + Math.sin(i / 17)))
  return f
}
const SPEECH = speech()
const SILENCE = new Int16Array(FRAME)

/** A TTS that answers at once: 2 s of audio per sentence, in one chunk. */
const tts: TextToSpeech = {
  name: 'zero',
  sampleRate: 8000,
  async *synthesize() {
    yield new Int16Array(16_000).fill(1000)
  },
}
const stt = (): SttSession => ({ sampleRate: 8000, capabilities: OPENAI_STT_CAPABILITIES, push() {}, finalize: async () => 'what time do you open', close: async () => {} })

function line(overrides: Partial<CallLine> = {}): CallLine {
  return inertLine({
    callId: 'bench',
    opening: 'Hello.',
    endpointingMaxMs: 200,
    maxCallSeconds: 3600,
    respond: async (_t, onText) => {
      onText('We open at seven. ')
      return { reply: 'We open at seven.', endCall: false, messageId: null }
    },
    ...overrides,
  })
}

async function overhead(): Promise<number[]> {
  const results: number[] = []
  for (let turn = 0; turn < 200; turn++) {
    // Endpointing hands the utterance to STT the moment it ends: that call is the start line.
    let endpointedAt = 0
    let firstAudio = 0
    const session: VoiceSession = new VoiceSession({
      line: line({ opening: '' }),
      vad: new EnergyVad(),
      stt: {
        ...stt(),
        finalize: async () => {
          endpointedAt = performance.now()
          return 'what time do you open'
        },
      },
      tts,
      chunkMs: 20,
      send: (f: OutboundFrame) => {
        if (f.kind === 'audio' && endpointedAt && !firstAudio) firstAudio = performance.now()
        return true
      },
    })
    session.start(8000)
    for (let i = 0; i < 20; i++) session.frame({ kind: 'audio', pcm: SPEECH, sampleRate: 8000, chunk: i + 1, timestamp: i * 20 })
    // The end-of-turn wait is the chart's delay in real time (endpointingMaxMs, 200 ms, caps it):
    // silence keeps coming, a frame a millisecond, until the answer's first frame or 2 s.
    const until = performance.now() + 2_000
    for (let i = 0; !firstAudio && performance.now() < until; i++) {
      session.frame({ kind: 'audio', pcm: SILENCE, sampleRate: 8000, chunk: 21 + i, timestamp: (21 + i) * 20 })
      await Bun.sleep(1)
    }
    await session.close()
    if (firstAudio) results.push(firstAudio - endpointedAt)
  }
  return results
}

/** N calls for `seconds`: each gets a 20 ms frame every 20 ms and plays a long reply; jitter of outbound frames. */
async function carry(n: number, vadOf: () => Promise<VoiceActivity>, seconds = 4): Promise<{ p99: number; dropped: number }> {
  const gaps: number[] = []
  let dropped = 0
  const sessions: VoiceSession[] = []
  const last: number[] = []
  for (let c = 0; c < n; c++) {
    const idx = c
    last.push(0)
    const s = new VoiceSession({
      // An opening long enough to speak through the whole run.
      line: line({ opening: 'This is a long opening sentence that keeps the agent talking for the whole of the measurement window. '.repeat(3) }),
      vad: await vadOf(),
      stt: stt(),
      tts: {
        ...tts,
        async *synthesize() {
          yield new Int16Array(8000 * 30).fill(800)
        },
      },
      chunkMs: 20,
      send: (f) => {
        if (f.kind !== 'audio') return true
        const now = performance.now()
        if (last[idx]) gaps.push(Math.abs(now - last[idx]! - 20))
        last[idx] = now
        return true
      },
    })
    s.start(8000)
    sessions.push(s)
  }
  const started = performance.now()
  let frame = 0
  // Inbound: every call gets its frame each 20 ms (silence: the caller listens).
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.floor((performance.now() - started) / 20)
      while (frame < due) {
        frame++
        for (const s of sessions) s.frame({ kind: 'audio', pcm: SILENCE, sampleRate: 8000, chunk: frame, timestamp: frame * 20 })
      }
      if (performance.now() - started >= seconds * 1000) return resolve()
      setTimeout(tick, 5)
    }
    tick()
  })
  for (const s of sessions) {
    dropped += s.dropped
    await s.close()
  }
  // The first second is the playout's lead (sent at once by design): measure what follows.
  const steady = gaps.slice(Math.floor(gaps.length / seconds))
  return { p99: percentile(steady, 99), dropped }
}

async function maxCalls(label: string, vadOf: () => Promise<VoiceActivity>, steps: number[]): Promise<number> {
  let best = 0
  for (const n of steps) {
    const { p99, dropped } = await carry(n, vadOf)
    console.log(`  ${label}: ${n} calls → outbound jitter p99 ${p99.toFixed(1)} ms, inbound frames dropped ${dropped}`)
    if (p99 > 20 || dropped > 0) break
    best = n
    Bun.gc(true)
    await Bun.sleep(200)
  }
  return best
}

/** Heap and resident-set growth over 200 live calls with Silero, per call (run first, on a fresh heap). */
async function memory(): Promise<{ heap: number; rss: number }> {
  await voiceActivity('silero') // the shared model loads once per process; not a per-call cost
  Bun.gc(true)
  const before = process.memoryUsage()
  const sessions: VoiceSession[] = []
  for (let i = 0; i < 200; i++) {
    const s = new VoiceSession({ line: line(), vad: await voiceActivity('silero'), stt: stt(), tts, chunkMs: 20, send: () => true })
    s.start(8000)
    for (let f = 0; f < 10; f++) s.frame({ kind: 'audio', pcm: SPEECH, sampleRate: 8000, chunk: f + 1, timestamp: f * 20 })
    sessions.push(s)
  }
  await Bun.sleep(500)
  Bun.gc(true)
  const after = process.memoryUsage()
  for (const s of sessions) await s.close()
  return { heap: (after.heapUsed - before.heapUsed) / 200, rss: (after.rss - before.rss) / 200 }
}

const MAX = Number(process.env.BENCH_MAX_CALLS ?? 500)
const steps = (from: number) => [from, ...[100, 200, 300, 400, 500, 600, 800].filter((n) => n > from && n <= MAX)]

const m = await memory()
console.log(`(c) memory per live call (Silero state included): heap ${(m.heap / 1024).toFixed(0)} KB, resident ${(m.rss / 1024).toFixed(0)} KB (target ≤ 2 MB)`)
const o = await overhead()
console.log(`(a) pipeline overhead, endpointing → first agent frame: p50 ${percentile(o, 50).toFixed(2)} ms, p95 ${percentile(o, 95).toFixed(2)} ms over ${o.length} turns (target p95 ≤ 15 ms)`)
console.log('(b) concurrency at 50 frames/s each way, outbound jitter p99 ≤ 20 ms:')
const stubbed = await maxCalls('VAD stubbed (energy)', async () => new EnergyVad(), steps(100))
const silero = await maxCalls('Silero VAD', () => voiceActivity('silero'), steps(50))
console.log(`    most calls: ${stubbed} with the VAD stubbed (target ≥ 300), ${silero} with Silero (target ≥ 100)`)
process.exit(0)
