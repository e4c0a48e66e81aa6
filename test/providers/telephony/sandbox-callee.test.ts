/**
 * The sandbox callee's timing markers, against a bare media bridge on loopback: `[wait N]` holds a
 * line until the agent has been silent N ms, `> [after N]` cuts in N ms into the agent's speech,
 * and a keyed line waits too. Times are read from the callee's own `media.timestamp` (its audio
 * clock, 20 ms a frame), so a loaded machine only makes them later: every assertion is a lower
 * bound, with 200 ms of slack for a frame burst that catches up after a stall.
 */
import { afterEach, expect, test } from 'bun:test'
import { SandboxScripts } from '../../../src/providers/stt/sandbox'
import { SandboxCallee } from '../../../src/providers/telephony/sandbox-callee'
import { SandboxTts, synthesiseSyllables } from '../../../src/providers/tts/sandbox'
import { decodeMulaw, encodeMulaw, PHONE_RATE } from '../../../src/voice/codecs'
import { KeypadListener } from '../../../src/voice/keypad'
import type { TextToSpeech } from '../../../src/voice/ports/tts'
import { until } from '../../support/until'

const SLACK_MS = 200
/** A line plays in real time: its waits and speech take a few seconds, far under 20 s. */
const LINE_WAIT_MS = 20_000

interface Heard {
  /** The callee's audio clock (ms) of its first frame that is not silence; null while it stays silent. */
  firstSoundAt: number | null
  keys: string[]
}

let server: ReturnType<typeof Bun.serve> | null = null
let callee: SandboxCallee | null = null
afterEach(() => {
  callee?.close()
  server?.stop(true)
  callee = null
  server = null
})

/** A bridge that answers `start` with `agentMs` of the agent's speech (a steady tone) and listens. */
function bridge(agentMs: number): { url: string; heard: Heard } {
  const heard: Heard = { firstSoundAt: null, keys: [] }
  const keypad = new KeypadListener()
  const tone = new Int16Array((PHONE_RATE * agentMs) / 1000)
  for (let i = 0; i < tone.length; i++) tone[i] = Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / PHONE_RATE))
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req, srv) => (srv.upgrade(req, { data: undefined }) ? undefined : new Response('no', { status: 400 })),
    websocket: {
      message(ws, raw) {
        const m = JSON.parse(String(raw))
        if (m.event === 'start') ws.send(JSON.stringify({ event: 'media', streamSid: m.streamSid, media: { payload: Buffer.from(encodeMulaw(tone)).toString('base64') } }))
        if (m.event !== 'media') return
        const bytes = Buffer.from(m.media.payload, 'base64')
        heard.keys.push(...keypad.push(decodeMulaw(bytes), PHONE_RATE))
        if (heard.firstSoundAt === null && bytes.some((b) => b !== 0xff)) heard.firstSoundAt = Number(m.media.timestamp)
      },
    },
  })
  return { url: `ws://127.0.0.1:${server.port}/media`, heard }
}

async function call(lines: string[], agentMs: number): Promise<{ heard: Heard; callee: SandboxCallee }> {
  const { url, heard } = bridge(agentMs)
  callee = new SandboxCallee({ url, callSid: 'CA1', lines, callId: 'call_1', scripts: new SandboxScripts(), tts: new SandboxTts() })
  await callee.connect()
  return { heard, callee }
}

test('[wait N]: the line waits until the agent has been silent N ms, and says only its words', async () => {
  const { heard, callee } = await call(['[wait 3000] Hello there'], 1_000)
  await until('the line is said', () => callee.log.said.length > 0 && heard.firstSoundAt !== null, LINE_WAIT_MS)
  expect(callee.log.said).toEqual(['Hello there'])
  // 1 s of the agent, then 3 s of its silence (not the 900 ms a line waits by default).
  expect(heard.firstSoundAt!).toBeGreaterThanOrEqual(1_000 + 3_000 - SLACK_MS)
}, 30_000)

test('> [after N]: the line cuts in N ms into the agent’s speech', async () => {
  const { heard, callee } = await call(['> [after 2000] Stop there'], 6_000)
  await until('the line is said', () => callee.log.said.length > 0 && heard.firstSoundAt !== null, LINE_WAIT_MS)
  expect(callee.log.said).toEqual(['Stop there'])
  expect(callee.log.interruptions.map((i) => i.kind)).toEqual(['interrupt'])
  expect(heard.firstSoundAt!).toBeGreaterThanOrEqual(2_000 - SLACK_MS)
  // Over the agent: it started while the agent's 6 s were still playing.
  expect(heard.firstSoundAt!).toBeLessThan(6_000)
}, 30_000)

test('~ [after N]: a noise burst N ms into the agent’s speech', async () => {
  const { heard, callee } = await call(['~ [after 1500]', 'Fine'], 4_000)
  await until('the noise starts', () => callee.log.interruptions.length > 0 && heard.firstSoundAt !== null, LINE_WAIT_MS)
  expect(callee.log.interruptions[0]!.kind).toBe('noise')
  expect(heard.firstSoundAt!).toBeGreaterThanOrEqual(1_500 - SLACK_MS)
}, 30_000)

test('[wait N] [keypad] keys: pressed as tones after the wait', async () => {
  const { heard, callee } = await call(['[wait 1500] [keypad] 42#'], 500)
  await until('the keys are heard', () => heard.keys.length === 3, LINE_WAIT_MS)
  expect(heard.keys).toEqual(['4', '2', '#'])
  expect(callee.log.said).toEqual(['[keypad] 42#'])
  expect(heard.firstSoundAt!).toBeGreaterThanOrEqual(500 + 1_500 - SLACK_MS)
}, 30_000)

test('the speech-to-text double follows the line’s speech, not the silence its voice is padded with', async () => {
  // A voice that pads each line with 300 ms of silence, as espeak-ng does.
  const padded: TextToSpeech = {
    name: 'padded',
    sampleRate: PHONE_RATE,
    async *synthesize(text) {
      yield synthesiseSyllables(text, PHONE_RATE)
      yield new Int16Array((PHONE_RATE * 300) / 1000)
    },
  }
  const said: number[] = []
  const scripts = new (class extends SandboxScripts {
    override said(callId: string, text: string, ms = 0, at?: number): void {
      said.push(ms)
      super.said(callId, text, ms, at)
    }
  })()
  const { url } = bridge(500)
  callee = new SandboxCallee({ url, callSid: 'CA1', lines: ['Do you sell gift cards?'], callId: 'call_1', scripts, tts: padded })
  await callee.connect()
  await until('the line is said', () => said.length > 0, LINE_WAIT_MS)
  // Its last word is heard once it has been said: the whole line's words by the end of its speech.
  const speechMs = (synthesiseSyllables('Do you sell gift cards?', PHONE_RATE).length / PHONE_RATE) * 1000
  expect(said[0]!).toBeGreaterThan(speechMs - 40)
  expect(said[0]!).toBeLessThanOrEqual(speechMs)
}, 30_000)
