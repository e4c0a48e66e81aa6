/**
 * The voice session alone, with instant fake engines and a line that echoes marks at once: the
 * opening, the call's time limit and the silence timeout ending politely, keys (dtmf messages or
 * tones in the audio) reaching the agent as text and joining a spoken turn, a TTS failure ending the call `failed`.
 */
import { describe, expect, test } from 'bun:test'
import type { OutboundFrame } from '../../src/media/frames'
import { keypadTones } from '../../src/media/keypad'
import { VOICE_LINES } from '../../src/media/phrases'
import { type CallLine, DTMF_GAP_MS, VoiceSession } from '../../src/media/session'
import { EnergyVad } from '../../src/media/vad'
import type { TextToSpeech } from '../../src/providers/tts/port'

const tts: TextToSpeech = {
  name: 'instant',
  sampleRate: 8000,
  async *synthesize(text) {
    yield new Int16Array(text.length * 40).fill(500) // 5 ms a character: short turns
  },
}

function harness(line: Partial<CallLine> = {}, engine: TextToSpeech = tts, heard = '') {
  const said: string[] = []
  const asked: string[] = []
  const customer: string[] = []
  const ended: { hangup: string; error?: string }[] = []
  let session: VoiceSession
  const full: CallLine = {
    callId: 'c1',
    opening: 'Hello there.',
    voice: 'aria',
    language: 'en',
    endpointingMaxMs: 200,
    maxCallSeconds: 600,
    respond: async (text, onText) => {
      asked.push(text)
      onText('Noted. ')
      return { reply: 'Noted.', endCall: false, messageId: null }
    },
    agentSaid: async (text) => void said.push(text),
    customerSaid: async (text) => void customer.push(text),
    latency: () => {},
    state: () => {},
    hangUp: async (reason) => {
      ended.push(reason)
      await session.close()
    },
    log: () => {},
    ...line,
  }
  const send = (f: OutboundFrame) => {
    // The line plays at once and echoes each mark.
    if (f.kind === 'mark') queueMicrotask(() => session.frame({ kind: 'mark', name: f.name }))
    return true
  }
  session = new VoiceSession({ line: full, vad: new EnergyVad(), stt: { sampleRate: 8000, push() {}, finalize: async () => heard, close: async () => {} }, tts: engine, send, chunkMs: 20 })
  return { session, said, asked, ended, customer }
}

const waitFor = async (ok: () => boolean, ms = 3_000) => {
  const until = Date.now() + ms
  while (!ok()) {
    if (Date.now() > until) throw new Error('timed out')
    await Bun.sleep(10)
  }
}

describe('voice session', () => {
  test('opens with its line, stored as heard', async () => {
    const h = harness()
    h.session.start(8000)
    await waitFor(() => h.said.length === 1)
    expect(h.said).toEqual(['Hello there.'])
    await h.session.close()
  })

  test('what the caller has heard of a turn is reported as it plays, a sentence at a time, under one turn id', async () => {
    const hearing: [string, number][] = []
    const finals: [string, number | undefined][] = []
    const h = harness({
      opening: 'Hello there, this is the shop. We open at eight on Sundays.',
      agentHearing: (text, turn) => void hearing.push([text, turn]),
      agentSaid: async (text, _id, _opening, turn) => void finals.push([text, turn]),
    })
    h.session.start(8000)
    await waitFor(() => finals.length === 1)
    const texts = hearing.map(([t]) => t)
    // Each whole sentence heard is reported (the last one comes whole with agentSaid); each report extends the one before.
    expect(texts).toEqual(['Hello there,', 'Hello there, this is the shop.'])
    for (let i = 1; i < texts.length; i++) expect(texts[i]!.startsWith(texts[i - 1]!)).toBe(true)
    expect(texts).toContain('Hello there, this is the shop.')
    expect(new Set(hearing.map(([, turn]) => turn)).size).toBe(1)
    expect(finals).toEqual([['Hello there, this is the shop. We open at eight on Sundays.', hearing[0]![1]]])
    await h.session.close()
  })

  test('the call time limit says goodbye, then hangs up answered', async () => {
    const h = harness({ maxCallSeconds: 0.3 })
    h.session.start(8000)
    await waitFor(() => h.ended.length === 1)
    expect(h.said.at(-1)).toBe(VOICE_LINES.timeLimit)
    expect(h.ended).toEqual([{ hangup: 'answered' }])
  })

  test('caller silence ends the call politely', async () => {
    const h = harness({ silenceTimeoutMs: 200 })
    h.session.start(8000)
    await waitFor(() => h.ended.length === 1)
    expect(h.said).toEqual(['Hello there.', VOICE_LINES.silence])
    expect(h.ended[0]!.hangup).toBe('answered')
  })

  test('keypad digits reach the agent as text once the caller stops pressing', async () => {
    const h = harness()
    h.session.start(8000)
    await waitFor(() => h.said.length === 1)
    for (const digit of ['4', '2']) h.session.frame({ kind: 'dtmf', digit })
    await Bun.sleep(DTMF_GAP_MS / 2)
    expect(h.asked).toEqual([])
    await waitFor(() => h.asked.length === 1)
    expect(h.asked).toEqual(['(The caller pressed 4 2 on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 42'])
    await h.session.close()
  })

  test('# ends a key sequence at once, and the transcript keeps it', async () => {
    const h = harness()
    h.session.start(8000)
    await waitFor(() => h.said.length === 1)
    // A key right after the # starts the next sequence: the # ended this one, not the gap.
    for (const digit of ['7', '0', '#', '5']) h.session.frame({ kind: 'dtmf', digit })
    await waitFor(() => h.asked.length === 1)
    expect(h.asked).toEqual(['(The caller pressed 7 0 # on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 70#'])
    await waitFor(() => h.customer.length === 2)
    expect(h.customer).toEqual(['[keypad] 70#', '[keypad] 5'])
    await waitFor(() => h.said.length === 3 && h.session.state === 'listening')
    await h.session.close()
  })

  test('keys heard as tones in the audio, where the line has no dtmf messages', async () => {
    const h = harness({ hearsKeypadTones: true })
    h.session.start(8000)
    await waitFor(() => h.said.length === 1)
    const tones = keypadTones('35#')
    for (let at = 0; at < tones.length; at += 160) h.session.frame({ kind: 'audio', pcm: tones.slice(at, at + 160), sampleRate: 8000, chunk: 0, timestamp: 0 })
    await waitFor(() => h.asked.length === 1)
    expect(h.asked).toEqual(['(The caller pressed 3 5 # on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 35#'])
    await h.session.close()
  })

  test('a line without tone listening takes tones for sound, not keys', async () => {
    const h = harness({}, tts, '')
    h.session.start(8000)
    await waitFor(() => h.said.length === 1)
    const tones = keypadTones('35#')
    for (let at = 0; at < tones.length; at += 160) h.session.frame({ kind: 'audio', pcm: tones.slice(at, at + 160), sampleRate: 8000, chunk: 0, timestamp: 0 })
    await Bun.sleep(DTMF_GAP_MS + 300)
    expect(h.customer).toEqual([])
    await h.session.close()
  })

  test('keys pressed while speaking join the words of that turn', async () => {
    const h = harness({}, tts, 'my account number is')
    h.session.start(8000)
    await waitFor(() => h.said.length === 1 && h.session.state === 'listening')
    const voice = new Int16Array(160).fill(8000)
    for (let i = 0; i < 20; i++) h.session.frame({ kind: 'audio', pcm: voice, sampleRate: 8000, chunk: 0, timestamp: 0 })
    await waitFor(() => h.session.state === 'callerSpeaking')
    for (const digit of ['9', '1', '#']) h.session.frame({ kind: 'dtmf', digit })
    for (let i = 0; i < 30; i++) h.session.frame({ kind: 'audio', pcm: new Int16Array(160), sampleRate: 8000, chunk: 0, timestamp: 0 })
    await waitFor(() => h.asked.length === 1)
    expect(h.customer).toEqual(['my account number is [keypad] 91#'])
    expect(h.asked).toEqual(['my account number is (The caller pressed 9 1 # on the keypad.)'])
    await h.session.close()
  })

  test('a TTS that fails ends the call failed, naming it', async () => {
    const broken: TextToSpeech = {
      name: 'broken',
      sampleRate: 8000,
      // biome-ignore lint/correctness/useYield: a stream that fails before its first chunk
      async *synthesize() {
        throw new Error('503 from the vendor')
      },
    }
    const h = harness({}, broken)
    h.session.start(8000)
    await waitFor(() => h.ended.length === 1)
    expect(h.ended[0]).toEqual({ hangup: 'failed', error: 'text-to-speech failed: 503 from the vendor' })
  })
})
