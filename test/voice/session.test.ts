/**
 * The voice session alone, with instant fake engines on a simulated clock (no real time passes;
 * test/support/turn-harness.ts): the opening, the call's time limit and the silence timeout
 * ending politely, a goodbye that never plays still ending the call, keys (dtmf messages or tones
 * in the audio) reaching the agent as text after `#` or the digit gap and joining a spoken turn, a
 * TTS failure ending the call `failed`, a speech engine at capacity losing one turn's words (the
 * agent asks again) where a broken one ends the call.
 */
import { describe, expect, test } from 'bun:test'
import { ANSWERED_BY_WAIT_MS, DTMF_GAP_MS, GOODBYE_GRACE_MS, GOODBYE_MS_PER_CHAR } from '../../machines/voice-turn'
import { KeypadListener, keypadTones } from '../../src/voice/keypad'
import { VOICE_LINES } from '../../src/voice/phrases'
import { SpeechError } from '../../src/voice/ports/stt'
import type { TextToSpeech } from '../../src/voice/ports/tts'
import { flush, turnHarness } from '../support/turn-harness'

const MS_PER_CHAR = 5

async function started(options: Parameters<typeof turnHarness>[0] = {}) {
  const h = turnHarness({ opening: 'Hello there.', msPerChar: MS_PER_CHAR, ...options, line: { endpointingMaxMs: 200, ...options.line } })
  h.session.start(8000)
  await flush()
  return h
}

describe('voice session', () => {
  test('opens with its line, stored as heard', async () => {
    const h = await started()
    await h.wait(100)
    expect(h.agent).toEqual(['Hello there.'])
    expect(h.session.state).toBe('listening')
    await h.session.close()
  })

  test('what the caller has heard of a turn is reported as it plays, a sentence at a time, under one turn id', async () => {
    const hearing: [string, number][] = []
    const finals: [string, number | undefined][] = []
    const h = await started({
      opening: 'Hello there, this is the shop. We open at eight on Sundays.',
      line: {
        agentHearing: (text, turn) => void hearing.push([text, turn]),
        agentSaid: async (text, _id, _opening, turn) => void finals.push([text, turn]),
      },
    })
    await h.wait(500)
    const texts = hearing.map(([t]) => t)
    // Each whole sentence is reported as its last mark comes back; each report extends the one before.
    expect(texts).toEqual(['Hello there,', 'Hello there, this is the shop.', 'Hello there, this is the shop. We open at eight on Sundays.'])
    expect(new Set(hearing.map(([, turn]) => turn)).size).toBe(1)
    expect(finals).toEqual([['Hello there, this is the shop. We open at eight on Sundays.', hearing[0]![1]]])
    await h.session.close()
  })

  test('the call time limit says goodbye, then hangs up answered', async () => {
    const h = await started({ line: { maxCallSeconds: 1 } })
    await h.wait(980)
    expect(h.ended).toEqual([])
    await h.wait(40)
    expect(h.context().why).toBe('the call reached its length limit')
    await h.wait(VOICE_LINES.timeLimit.length * MS_PER_CHAR + 100)
    expect(h.agent.at(-1)).toBe(VOICE_LINES.timeLimit)
    expect(h.ended).toEqual([{ hangup: 'answered' }])
  })

  test('caller silence ends the call politely, counted from when the agent listens', async () => {
    const h = await started({ line: { silenceTimeoutMs: 200 } })
    await h.wait(100)
    expect(h.session.state).toBe('listening')
    await h.wait(200)
    expect(h.context().why).toBe('the caller said nothing for the silence timeout')
    await h.wait(VOICE_LINES.silence.length * MS_PER_CHAR + 100)
    expect(h.agent).toEqual(['Hello there.', VOICE_LINES.silence])
    expect(h.ended).toEqual([{ hangup: 'answered' }])
  })

  test('a goodbye the line never plays (its speech never comes) still ends the call after its grace', async () => {
    const hanging: TextToSpeech = {
      name: 'hangs-on-goodbye',
      sampleRate: 8000,
      async *synthesize(text, options) {
        if (text.includes('Goodbye')) await new Promise((resolve) => options.signal?.addEventListener('abort', resolve))
        yield new Int16Array(text.length * 8 * MS_PER_CHAR).fill(500)
      },
    }
    const h = await started({ tts: hanging, line: { maxCallSeconds: 1 } })
    await h.wait(1_000)
    const grace = VOICE_LINES.timeLimit.length * GOODBYE_MS_PER_CHAR + GOODBYE_GRACE_MS
    await h.wait(grace - 40)
    expect(h.ended).toEqual([])
    await h.wait(60)
    expect(h.ended).toEqual([{ hangup: 'answered' }])
  })

  test('keypad digits reach the agent as text once the caller stops pressing for the digit gap', async () => {
    const h = await started()
    await h.wait(100)
    h.session.frame({ kind: 'dtmf', digit: '4' })
    await h.wait(1_000)
    h.session.frame({ kind: 'dtmf', digit: '2' })
    await h.wait(DTMF_GAP_MS - 40)
    expect(h.asked).toEqual([])
    await h.wait(60)
    expect(h.asked.map((a) => a.text)).toEqual(['(The caller pressed 4 2 on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 42'])
    await h.session.close()
  })

  test('`digits.done` ends the digits before the gap (the seam a keypad feature ends an entry with)', async () => {
    const h = await started()
    await h.wait(100)
    for (const digit of ['1', '2', '3']) h.session.frame({ kind: 'dtmf', digit })
    h.session.chart.send({ type: 'digits.done' })
    await flush()
    expect(h.customer).toEqual(['[keypad] 123'])
    await h.session.close()
  })

  test('# ends a key sequence at once, and the transcript keeps it', async () => {
    const h = await started()
    await h.wait(100)
    // A key right after the # starts the next sequence: the # ended this one, not the gap.
    for (const digit of ['7', '0', '#', '5']) h.session.frame({ kind: 'dtmf', digit })
    await flush()
    expect(h.asked.map((a) => a.text)).toEqual(['(The caller pressed 7 0 # on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 70#'])
    await h.wait(DTMF_GAP_MS)
    expect(h.customer).toEqual(['[keypad] 70#', '[keypad] 5'])
    await h.session.close()
  })

  test('keys heard as tones in the audio, where the line has no dtmf messages', async () => {
    const h = await started({ line: { hearsKeypadTones: true } })
    await h.wait(100)
    const tones = keypadTones('35#')
    for (let at = 0; at + 160 <= tones.length; at += 160) h.session.frame({ kind: 'audio', pcm: tones.slice(at, at + 160), sampleRate: 8000, chunk: 0, timestamp: 0 })
    await h.wait(100)
    expect(h.asked.map((a) => a.text)).toEqual(['(The caller pressed 3 5 # on the keypad.)'])
    expect(h.customer).toEqual(['[keypad] 35#'])
    // The tones were kept from the VAD: no caller speech, no turn of words.
    expect(h.states).not.toContain('callerSpeaking')
    await h.session.close()
  })

  test('a line without tone listening takes tones for sound, not keys', async () => {
    const h = await started()
    await h.wait(100)
    const tones = keypadTones('35#')
    for (let at = 0; at + 160 <= tones.length; at += 160) h.session.frame({ kind: 'audio', pcm: tones.slice(at, at + 160), sampleRate: 8000, chunk: 0, timestamp: 0 })
    await h.silence(DTMF_GAP_MS + 600)
    expect(h.customer).toEqual([])
    await h.session.close()
  })

  test('keys pressed while speaking join the words of that turn', async () => {
    const h = await started()
    await h.wait(100)
    await h.speak(400, 'my account number is')
    expect(h.session.state).toBe('callerSpeaking')
    for (const digit of ['9', '1', '#']) h.session.frame({ kind: 'dtmf', digit })
    await h.silence(1_600)
    expect(h.customer).toEqual(['my account number is [keypad] 91#'])
    expect(h.asked.map((a) => a.text)).toEqual(['my account number is (The caller pressed 9 1 # on the keypad.)'])
    await h.session.close()
  })

  test('voicemail drop: silent until told who answered; a machine gets the message, then the call ends voicemail', async () => {
    const h = await started({ line: { voicemail: 'Please call the clinic back.' } })
    // The machine's greeting is nobody's turn.
    await h.speak(600, 'hi you have reached priya')
    await h.silence(1_000)
    expect(h.agent).toEqual([])
    expect(h.asked).toEqual([])
    h.session.answeredBy('machine')
    h.session.answeredBy('human')
    await h.wait(1_000)
    expect(h.agent).toEqual(['Please call the clinic back.'])
    expect(h.ended).toEqual([{ hangup: 'voicemail' }])
    expect(h.asked).toEqual([])
  })

  test('voicemail drop: a person hears the opening; no verdict in ANSWERED_BY_WAIT_MS is taken for one', async () => {
    const h = await started({ line: { voicemail: 'Please call the clinic back.' } })
    h.session.answeredBy('human')
    await h.wait(200)
    expect(h.agent).toEqual(['Hello there.'])
    await h.session.close()
    const late = await started({ line: { voicemail: 'Please call the clinic back.' } })
    await late.wait(ANSWERED_BY_WAIT_MS - 100)
    expect(late.agent).toEqual([])
    await late.wait(300)
    expect(late.agent).toEqual(['Hello there.'])
    await late.session.close()
  })

  test("voicemail drop: the who-answered wait is the chart's, on the call's clock, and a verdict ends it", async () => {
    const h = await started({ line: { voicemail: 'Please call the clinic back.' } })
    const waiting = () => h.session.chart.getSnapshot().matches({ live: { answer: 'awaiting' } })
    expect(waiting()).toBe(true)
    await h.wait(ANSWERED_BY_WAIT_MS - 100)
    expect(waiting()).toBe(true)
    await h.wait(200)
    expect(waiting()).toBe(false)
    expect(h.agent).toEqual(['Hello there.'])
    await h.session.close()
    const told = await started({ line: { voicemail: 'Please call the clinic back.' } })
    told.session.answeredBy('human')
    expect(told.session.chart.getSnapshot().matches({ live: { answer: 'known' } })).toBe(true)
    await told.session.close()
  })

  test('keys the agent presses (send_digits) go down the line as tones after its words, and read [keypad] in the transcript', async () => {
    const h = await started({
      line: {
        respond: async (_text, onText) => {
          onText('One moment. ')
          return { reply: 'One moment.', endCall: false, digits: '1#', messageId: null }
        },
      },
    })
    await h.wait(200)
    for (const digit of ['5', '#']) h.session.frame({ kind: 'dtmf', digit })
    await h.wait(1_500)
    expect(h.agent).toEqual(['Hello there.', 'One moment.', '[keypad] 1#'])
    const audio = h.frames.filter((f) => f.kind === 'audio')
    const listener = new KeypadListener()
    const keys = audio.flatMap((f) => (f.kind === 'audio' ? listener.push(f.pcm, f.sampleRate) : []))
    expect(keys.join('')).toBe('1#')
    expect(h.session.state).toBe('listening')
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
    const h = await started({ tts: broken })
    expect(h.ended).toEqual([{ hangup: 'failed', error: 'text-to-speech failed: 503 from the vendor' }])
  })

  test("a speech engine at capacity loses one turn's words: the agent asks again and the call goes on; a broken one ends the call failed", async () => {
    let error: Error | null = new SpeechError('pocketsphinx', 'every speech decoder is busy and the queue for them is full', { busy: true })
    const h = await started({ finalError: () => error })
    await h.wait(100)
    await h.speak(400, 'What time do you open?')
    await h.silence(400)
    expect(h.ended).toEqual([])
    expect(h.whys).toContain("the caller's words were lost (every speech decoder is busy and the queue for them is full): the agent asks again")
    await h.silence(VOICE_LINES.repeat.length * MS_PER_CHAR + 200)
    expect(h.agent).toEqual(['Hello there.', VOICE_LINES.repeat])
    expect(h.customer).toEqual([])
    expect(h.session.state).toBe('listening')
    // The next turn is heard and answered as any.
    error = null
    await h.speak(400, 'What time do you open?')
    await h.silence(400)
    expect(h.customer).toEqual(['What time do you open?'])

    error = new SpeechError('pocketsphinx', 'the decoder crashed')
    await h.silence(3_000)
    await h.speak(400, 'And on Sundays?')
    await h.silence(400)
    expect(h.context().why).toBe('speech-to-text failed: the decoder crashed')
    await h.wait(VOICE_LINES.trouble.length * MS_PER_CHAR + GOODBYE_GRACE_MS + 200)
    expect(h.agent.at(-1)).toBe(VOICE_LINES.trouble)
    expect(h.ended).toEqual([{ hangup: 'failed', error: 'speech-to-text failed: the decoder crashed' }])
  })

  test('a streaming engine that fails at a pause, before any words came, ends the call failed with its reason', async () => {
    const cancelled = new SpeechError('assemblyai', 'AssemblyAI closed the stream (3005 Session Cancelled: An error occurred)')
    const h = await started({ finalError: () => cancelled })
    await h.wait(100)
    await h.speak(400, '')
    await h.silence(3_000)
    await h.wait(VOICE_LINES.trouble.length * MS_PER_CHAR + GOODBYE_GRACE_MS + 200)
    expect(h.ended).toEqual([{ hangup: 'failed', error: `speech-to-text failed: ${cancelled.message}` }])
  })
})
