/**
 * The Realtime engine's test harness: a session (src/voice/realtime-session.ts) on a connection to
 * a local fake of OpenAI's Realtime API (test/fakes/openai-realtime.ts), and the line the test
 * plays: it takes the session's frames and echoes marks when told the caller heard them, as Twilio does.
 */

import { RealtimeConnection, type RealtimeOptions } from '../../../src/providers/realtime/openai'
import { PHONE_RATE } from '../../../src/voice/codecs'
import type { OutboundFrame } from '../../../src/voice/frames'
import { type RealtimeLine, RealtimeSession, type RealtimeToolOutcome } from '../../../src/voice/realtime-session'
import { EnergyVad } from '../../../src/voice/vad'
import type { RealtimeFake } from '../../fakes/openai-realtime'

export const KEY = 'sk-realtime-test-key-RRRR5555'

/** 20 ms frames of a 440 Hz tone (speech to the fake's VAD) or silence, at the phone's rate. */
export const tone = (ms: number) => Int16Array.from({ length: (PHONE_RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / PHONE_RATE)))
export const silence = (ms: number) => new Int16Array((PHONE_RATE * ms) / 1000)

/** Our turn detection: the energy VAD, a turn over after this much silence. */
export const OUR_WAIT_MS = 600

/** A line the test plays: what the session sent, and marks echoed on demand. */
export class TestLine {
  readonly frames: OutboundFrame[] = []
  private echoed = 0
  constructor(private session: () => RealtimeSession) {}
  send = (f: OutboundFrame) => {
    this.frames.push(f)
    return true
  }
  get marks(): string[] {
    return this.frames.flatMap((f) => (f.kind === 'mark' ? [f.name] : []))
  }
  /** The caller has heard the first `count` marks' audio (all sent so far when omitted). */
  hear(count = this.marks.length): void {
    for (const name of this.marks.slice(this.echoed, count)) this.session().frame({ kind: 'mark', name })
    this.echoed = Math.max(this.echoed, count)
  }
  /** The caller's audio, in 20 ms frames at the line's pace (Twilio streams in real time). */
  async say(pcm: Int16Array): Promise<void> {
    for (let at = 0; at < pcm.length; at += 160) {
      this.session().frame({ kind: 'audio', pcm: pcm.subarray(at, at + 160), sampleRate: PHONE_RATE, chunk: 0, timestamp: 0 })
      await new Promise((r) => setTimeout(r, 20))
    }
  }
}

/** The fake's options for a call, and calls on it: `call(options, tool outcomes)`. */
export function harness(fake: RealtimeFake) {
  const OPTIONS: RealtimeOptions = {
    apiKey: KEY,
    baseUrl: fake.baseUrl,
    model: 'gpt-realtime',
    voice: 'marin',
    instructions: 'You are a test agent.',
    tools: [{ name: 'end_call', description: 'Hang up.', parameters: { type: 'object', properties: {} } }],
    turnDetection: 'server_vad',
  }

  async function call(opts: Partial<RealtimeOptions> & { silenceMs?: number } = {}, runTool?: (name: string) => RealtimeToolOutcome) {
    const said: { who: string; text: string; usage?: unknown }[] = []
    const hangUps: { hangup: string; error?: string }[] = []
    const tools: string[] = []
    const transfers: string[] = []
    const connection = await RealtimeConnection.open({ ...OPTIONS, ...opts })
    let session!: RealtimeSession
    const line = new TestLine(() => session)
    const callLine: RealtimeLine = {
      callId: 'c1',
      opening: 'Hello there, how can I help you today?',
      maxCallSeconds: 600,
      customerSaid: async (text) => void said.push({ who: 'customer', text }),
      agentSaid: async (text, usage) => void said.push({ who: 'agent', text, usage }),
      runTool: async (name) => {
        tools.push(name)
        return runTool?.(name) ?? { output: { ok: true } }
      },
      state: () => {},
      transfer: async (name) => {
        transfers.push(name)
        return `I'm sorry, I couldn't put you through to ${name} just now.`
      },
      hangUp: async (r) => void hangUps.push(r),
      log: () => {},
    }
    const turns = opts.turnDetection === 'service_vad' ? { vad: new EnergyVad(), waitMs: OUR_WAIT_MS } : undefined
    session = new RealtimeSession({ line: callLine, connection, send: line.send, turns, silenceMs: opts.silenceMs })
    session.start(PHONE_RATE)
    return { session, line, said, hangUps, tools, transfers, log: () => fake.sessions.at(-1)! }
  }

  return { OPTIONS, call }
}
