/**
 * A voice session on a simulated clock (XState's SimulatedClock, the chart's and the playout's
 * waits alike) with fake engines, for the turn-taking tests: a VAD that calls a loud frame speech,
 * a streaming STT whose words the test scripts, a TTS that makes `msPerChar` of audio a character
 * (1 ms unless told), and a line that plays the agent's audio in (simulated) real time and echoes each mark
 * once the audio before it has played, as Twilio does; `clear` drops what it has not played.
 * No real time passes: `flush` lets the session's promises settle, the steps move the clock.
 */
import { SimulatedClock } from 'xstate'
import type { OutboundFrame } from '../../src/voice/frames'
import type { SttPartial, SttSession, SttTurnEvent } from '../../src/voice/ports/stt'
import type { TextToSpeech } from '../../src/voice/ports/tts'
import { type CallLine, VoiceSession } from '../../src/voice/session'
import type { VoiceActivity } from '../../src/voice/vad'

export const FRAME_MS = 20
const SPEECH = new Int16Array(160).fill(3000)
const SILENCE = new Int16Array(160)

/** Lets every promise the session started settle; no time passes. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 8; i++) await new Promise((r) => setImmediate(r))
}

export interface HarnessOptions {
  /** The agent's first line. */
  opening?: string
  /** A VAD push waits while this is pending (a stalled VAD). */
  vadStall?: () => Promise<void> | null
  line?: Partial<CallLine>
  /** Milliseconds of agent speech a character (1: replies play in a blink). */
  msPerChar?: number
  /** Another speech engine for the agent. */
  tts?: TextToSpeech
  /** A final waits while this is pending (a decoder slow to answer); finals come in order, as one decoder's do. */
  finalStall?: () => Promise<void> | null
  /** A final rejects with this error (the engine refused the utterance) while it returns one. */
  finalError?: () => Error | null
  /** The engine's words do not judge turns (pocketsphinx): no final is asked for at each pause, only when the turn ends. */
  noTurnCues?: boolean
  /** Whether the engine's words sound like one of the phrases (pocketsphinx's pronouncing dictionary). */
  soundsLike?: (text: string, phrases: readonly string[]) => boolean
  /** The engine judges turns itself (Deepgram Flux): the test reports its turn events (`turn`), and `finalize` answers the last end's text. */
  vendorTurns?: boolean
}

export function turnHarness(options: HarnessOptions = {}) {
  const clock = new SimulatedClock()
  const states: string[] = []
  const whys: string[] = []
  const customer: string[] = []
  const agent: string[] = []
  const asked: { text: string; held: boolean }[] = []
  const written: string[] = []
  const frames: OutboundFrame[] = []
  const vadPushes: number[] = []
  const ended: { hangup: string; error?: string }[] = []
  const vad: VoiceActivity = {
    name: 'energy',
    push: async (pcm) => {
      vadPushes.push(pcm.length / 160)
      const stall = options.vadStall?.()
      if (stall) await stall
      return Array.from({ length: pcm.length / 160 }, (_, i) => ({ speech: pcm[i * 160] !== 0, ms: FRAME_MS, end: (i + 1) * 160 }))
    },
    reset() {},
  }
  const tts: TextToSpeech = options.tts ?? {
    name: 'instant',
    sampleRate: 8000,
    async *synthesize(text) {
      yield new Int16Array(text.length * 8 * (options.msPerChar ?? 1)).fill(500)
    },
  }
  let partial: ((p: SttPartial) => void) | null = null
  // A streaming engine: finalize answers the words said since the last finalize.
  let pending = ''
  let finalized = 0
  // Speech windows the engine was told of (a shared decoder is taken at the first of an utterance).
  let speechWindows = 0
  let previousFinal: Promise<string> = Promise.resolve('')
  let turnListener: ((e: SttTurnEvent) => void) | null = null
  let vendorEnd = ''
  const stt: SttSession = {
    sampleRate: 8000,
    capabilities: { streaming: true, interimWords: true, punctuation: true, endOfTurn: !!options.vendorTurns, eagerEndOfTurn: !!options.vendorTurns, wordTimings: false },
    ...(options.vendorTurns
      ? {
          onTurn: (l: (e: SttTurnEvent) => void) => {
            turnListener = l
          },
        }
      : {}),
    ...(options.noTurnCues ? { turnCues: false } : {}),
    ...(options.soundsLike ? { soundsLike: options.soundsLike } : {}),
    push() {},
    speech() {
      speechWindows++
    },
    finalize: () => {
      finalized++
      if (options.vendorTurns) {
        const text = vendorEnd
        vendorEnd = ''
        return Promise.resolve(text)
      }
      const words = pending
      pending = ''
      const stall = options.finalStall?.()
      const error = options.finalError?.()
      previousFinal = previousFinal.then(() => stall).then(() => words)
      return error ? previousFinal.then(() => Promise.reject(error)) : previousFinal
    },
    onPartial: (l) => {
      partial = l
    },
    close: async () => {},
  }
  let session: VoiceSession
  const line: CallLine = {
    callId: 'c1',
    opening: options.opening ?? '',
    voice: 'aria',
    language: 'en',
    maxCallSeconds: 600,
    respond: async (text, onText, signal, release) => {
      asked.push({ text, held: !!release })
      onText('We open at eight on Sundays. ')
      // The engine's contract: nothing is written before release; an aborted turn writes nothing.
      if (release) await Promise.race([release, new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))])
      if (signal.aborted) throw new Error('aborted')
      written.push(text)
      return { reply: 'We open at eight on Sundays.', endCall: false, messageId: null }
    },
    agentSaid: async (text) => void (text && agent.push(text)),
    customerSaid: async (text) => void customer.push(text),
    latency: () => {},
    state: (s, why) => {
      if (states.at(-1) !== s) states.push(s)
      if (why && whys.at(-1) !== why) whys.push(why)
    },
    hangUp: async (reason) => {
      ended.push(reason)
      await session.close()
    },
    log: () => {},
    ...options.line,
  }
  // The line plays the agent's audio at 8 kHz from when it arrives and echoes each mark once
  // what came before it has played; `clear` drops the rest (its marks are not echoed as played).
  let playedUntil = 0
  let echoes: number[] = []
  const send = (f: OutboundFrame) => {
    frames.push(f)
    if (f.kind === 'audio') playedUntil = Math.max(playedUntil, clock.now()) + (f.pcm.length * 1000) / 8000
    else if (f.kind === 'mark') {
      const name = f.name
      const id = clock.setTimeout(() => session.frame({ kind: 'mark', name }), Math.max(0, playedUntil - clock.now()))
      echoes.push(id)
    } else if (f.kind === 'clear') {
      for (const id of echoes) clock.clearTimeout(id)
      echoes = []
      playedUntil = clock.now()
    }
    return true
  }
  session = new VoiceSession({ line, vad, stt, tts, send, chunkMs: 20, actor: { clock } })

  /** One 20 ms frame from the caller, then the clock moves on a frame, as on a real line. */
  const frame = async (pcm: Int16Array) => {
    session.frame({ kind: 'audio', pcm, sampleRate: 8000, chunk: 0, timestamp: 0 })
    await flush()
    clock.increment(FRAME_MS)
    await flush()
  }
  return {
    session,
    clock,
    states,
    whys,
    customer,
    agent,
    asked,
    written,
    frames,
    vadPushes,
    ended,
    finalized: () => finalized,
    /** Speech windows the speech-to-text engine was told of (each would take or keep a decoder). */
    speechWindows: () => speechWindows,
    /** The chart's context now. */
    context: () => session.chart.getSnapshot().context,
    /**
     * The caller speaks `ms` of audio, new words the engine hears as `heard` and finalises as
     * `finalText`; `stable: false` reports `heard` as interim words (Deepgram's `is_final: false`).
     */
    async speak(ms: number, heard: string, finalText = heard, stable = true) {
      pending = [pending, finalText].filter(Boolean).join(' ')
      for (let t = 0; t < ms; t += FRAME_MS) await frame(SPEECH)
      if (heard) partial?.({ text: heard, stable, endOfSpeech: false })
      await flush()
    },
    /** The engine's own turn event (`vendorTurns`); an end's text is what `finalize` answers next. */
    async turn(event: SttTurnEvent) {
      if (event.type === 'end') vendorEnd = event.text
      turnListener?.(event)
      await flush()
    },
    /** Silence from the caller for `ms`, a frame at a time. */
    async silence(ms: number) {
      for (let t = 0; t < ms; t += FRAME_MS) await frame(SILENCE)
    },
    /** Time passes with no audio from the line at all (keypad, a dead inbound track). */
    async wait(ms: number) {
      for (let t = 0; t < ms; t += FRAME_MS) {
        clock.increment(FRAME_MS)
        await flush()
      }
    },
    /** Agent audio sent so far, in ms. */
    agentAudioMs: () => frames.reduce((n, f) => n + (f.kind === 'audio' ? f.pcm.length / 8 : 0), 0),
  }
}

export type TurnHarness = ReturnType<typeof turnHarness>
