/**
 * bench:turns' profiles: the engines each one runs, against which fakes with which delays, and its
 * floor. Every stage a profile does not replace runs on the published delays of
 * test/fakes/realistic-delays.ts, so the floors compare.
 *
 * A floor is the stages in a row after the caller's last word, minus what the engine overlaps:
 * `end` (the turn's words in hand: a final transcript, the vendor's end of turn, the model's
 * VAD), then the answer's stages (`after`: first LLM token, first TTS audio); with an eager end
 * the answer starts at `eager` and the end only releases it, so the floor is the later of the end
 * and eager + the answer's stages. The target is the floor + 30 ms (issue 47).
 */
import { ASSEMBLYAI_DEFAULTS, startAssemblyAiFake, UTTERANCE_PAUSE_MS } from '../test/fakes/assemblyai'
import { startCartesiaFake } from '../test/fakes/cartesia'
import { startDeepgramFake } from '../test/fakes/deepgram'
import { startFluxFake } from '../test/fakes/deepgram-flux'
import { startOpenAIFake } from '../test/fakes/openai'
import { startRealtimeFake } from '../test/fakes/openai-realtime'
import { REALISTIC, REALISTIC_OPTIONS } from '../test/fakes/realistic-delays'
import { startSpeechFake } from '../test/fakes/speech-vendors'
import { startTelnyxFake, type TelnyxFake } from '../test/fakes/telnyx'
import { freePort } from '../test/support/child-service'

/** The margin over a profile's floor its p50 may take (issue 47: "target: ≤ floor + 30 ms"). */
export const FLOOR_MARGIN_MS = 30
/** The local engines have no published delays to make a floor of; their target is the spec's p50 ≤ 600 ms. */
export const LOCAL_TARGET_MS = 600

export interface Floor {
  /** The caller's last word → the turn's words in hand, and what that is. */
  end: [string, number]
  /** The caller's last word → an eager end that starts the answer, when the engine gives one. */
  eager?: [string, number]
  /** The answer's stages after its start. */
  after: [string, number][]
}

const LLM: [string, number] = ['first LLM token', REALISTIC.openaiFirstTokenMs]
const ELEVEN: [string, number] = ['ElevenLabs first audio', REALISTIC.elevenlabsFirstAudioMs]
const DEEPGRAM_FINAL: [string, number] = ['Deepgram final', REALISTIC.deepgramFinalMs]

export const FLOORS: Record<string, Floor> = {
  vendors: { end: DEEPGRAM_FINAL, after: [LLM, ELEVEN] },
  cartesia: { end: DEEPGRAM_FINAL, after: [LLM, ['Cartesia first audio', REALISTIC.cartesiaFirstAudioMs]] },
  // The utterance waits for its pause and for its words to be final, whichever is later.
  assemblyai: {
    end: ['end of turn', Math.max(REALISTIC.assemblyaiEndMs, ASSEMBLYAI_DEFAULTS.minSilenceMs)],
    eager: ['utterance', Math.max(UTTERANCE_PAUSE_MS, REALISTIC.assemblyaiEndMs)],
    after: [LLM, ELEVEN],
  },
  // The Telnyx fake adds no delay of its own: the vendors profile's floor.
  telnyx: { end: DEEPGRAM_FINAL, after: [LLM, ELEVEN] },
  realtime: { end: ['server VAD', REALISTIC.realtimeVadSilenceMs], after: [['first audio', REALISTIC.realtimeFirstAudioMs]] },
  flux: { end: ['EndOfTurn', REALISTIC.fluxEndOfTurnMs], eager: ['EagerEndOfTurn', REALISTIC.fluxEagerEndMs], after: [LLM, ELEVEN] },
}

/** The floor in ms and how it adds up. */
export function floorOf(f: Floor): { ms: number; how: string } {
  const after = f.after.reduce((n, [, ms]) => n + ms, 0)
  const steps = f.after.map(([what, ms]) => `${what} ${ms}`).join(' + ')
  if (!f.eager) return { ms: f.end[1] + after, how: `${f.end[0]} ${f.end[1]} + ${steps}` }
  const ms = Math.max(f.end[1], f.eager[1] + after)
  return { ms, how: `${f.eager[0]} ${f.eager[1]} + ${steps}, the ${f.end[0]} at ${f.end[1]} inside it` }
}

export interface ProfileSetup {
  env: Record<string, string>
  model: string
  voice: Record<string, unknown>
  stops: (() => unknown)[]
  stt: ReturnType<typeof startDeepgramFake> | ReturnType<typeof startAssemblyAiFake> | null
  flux: ReturnType<typeof startFluxFake> | null
  realtime: ReturnType<typeof startRealtimeFake> | null
  telnyx: TelnyxFake | null
}

/** The service's environment and the fakes for profile `name` (the fakes started; `stops` ends them). */
export async function setUpProfile(name: string, key: string, reply: string): Promise<ProfileSetup> {
  const out: ProfileSetup = { env: {}, model: 'gpt-4o-mini', voice: { answersCalls: true }, stops: [], stt: null, flux: null, realtime: null, telnyx: null }
  if (name === 'local') {
    out.model = 'local'
    out.env = { STT_PROVIDER: 'pocketsphinx', TTS_PROVIDER: 'espeak' }
    return out
  }
  if (name === 'realtime') {
    const realtime = startRealtimeFake({ apiKey: key, models: ['gpt-realtime', 'gpt-4o-mini', 'whisper-1', 'tts-1'], ...REALISTIC_OPTIONS.realtime })
    out.realtime = realtime
    out.stops.push(() => realtime.stop())
    out.env = { OPENAI_BASE_URL: realtime.baseUrl }
    out.model = 'local'
    return out
  }
  const openai = startOpenAIFake({ apiKey: key, ...REALISTIC_OPTIONS.openai, defaultReply: reply })
  const eleven = startSpeechFake(key, REALISTIC_OPTIONS.elevenlabs)
  const cartesia = name === 'cartesia' ? startCartesiaFake(key, REALISTIC_OPTIONS.cartesia) : null
  out.stops.push(
    () => openai.stop(),
    () => eleven.stop(),
    () => cartesia?.stop(),
  )
  Object.assign(out.env, {
    TTS_PROVIDER: cartesia ? 'cartesia' : 'elevenlabs',
    ELEVENLABS_API_KEY: key,
    ELEVENLABS_BASE_URL: eleven.url,
    OPENAI_API_KEY: key,
    OPENAI_BASE_URL: openai.baseUrl,
    ...(cartesia ? { CARTESIA_API_KEY: key, CARTESIA_BASE_URL: cartesia.url } : {}),
  })
  if (name === 'flux') {
    const flux = startFluxFake(key, { endSilenceMs: REALISTIC.fluxEndOfTurnMs, eagerSilenceMs: REALISTIC.fluxEagerEndMs })
    out.flux = flux
    out.stops.push(() => flux.stop())
    Object.assign(out.env, { STT_PROVIDER: 'deepgram-flux', DEEPGRAM_API_KEY: key, DEEPGRAM_BASE_URL: flux.url })
    out.voice = { answersCalls: true, flux: { eagerEotThreshold: 0.5 } }
    return out
  }
  // The fake reveals each line's words in step with its voiced audio (measured on the audio the
  // callee sends): no word before it has been said, every word by the end of the line.
  const stt = name === 'assemblyai' ? startAssemblyAiFake(key, REALISTIC_OPTIONS.assemblyai) : startDeepgramFake(key, REALISTIC_OPTIONS.deepgram)
  out.stt = stt
  out.stops.push(() => stt.stop())
  Object.assign(
    out.env,
    name === 'assemblyai' ? { STT_PROVIDER: 'assemblyai', ASSEMBLYAI_API_KEY: key, ASSEMBLYAI_BASE_URL: stt.url } : { STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: key, DEEPGRAM_BASE_URL: stt.url },
  )
  if (name === 'telnyx') {
    const fake = startTelnyxFake()
    out.telnyx = fake
    out.stops.push(() => fake.stop())
    const port = String(await freePort())
    Object.assign(out.env, {
      PORT: port,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      TELEPHONY_PROVIDER: 'telnyx',
      TELNYX_API_KEY: fake.apiKey,
      TELNYX_CONNECTION_ID: fake.connectionId,
      TELNYX_PUBLIC_KEY: fake.publicKey,
      TELNYX_API_BASE_URL: fake.url,
    })
  }
  return out
}
