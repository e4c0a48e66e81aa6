/**
 * Which speech-to-text and text-to-speech one call uses, decided in one place. In order: the
 * developer's own keys (BYOK, when switched on: the call's media asks the byok feature first and
 * comes here only when BYOK is off, never as a fallback), else the service's keys from env (Deepgram
 * or AssemblyAI / ElevenLabs, else Cartesia's voice, else OpenAI for both), else the local engines
 * (pocketsphinx, espeak-ng) when installed, else — on the sandbox
 * network only — the sandbox's test doubles (scripted transcripts, a formant voice), which are
 * never used for a real call. `STT_PROVIDER` / `TTS_PROVIDER` pin one engine (tests, operators).
 */
import { availableParallelism } from 'node:os'
import type { Config } from '../config'
import type { SpeechToText, TextToSpeech } from '../voice/public'
import { AssemblyAiStt } from './stt/assemblyai'
import type { PoolStats } from './stt/decoder-pool'
import { DeepgramStt } from './stt/deepgram'
import { DeepgramFluxStt } from './stt/deepgram-flux'
import { OpenAiTranscription } from './stt/openai'
import { PocketsphinxStt } from './stt/pocketsphinx'
import { sphinxMissing } from './stt/pocketsphinx-ffi'
import { PocketsphinxLiveStt } from './stt/pocketsphinx-live'
import { type SandboxScripts, SandboxStt } from './stt/sandbox'
import { CartesiaTts } from './tts/cartesia'
import { ElevenLabsTts } from './tts/elevenlabs'
import { EspeakTts } from './tts/espeak'
import { espeakLibraryMissing } from './tts/espeak-ffi'
import { EspeakPool, type SynthStats } from './tts/espeak-pool'
import { OpenAiSpeech } from './tts/openai'
import { SandboxTts } from './tts/sandbox'

export interface SpeechChoice {
  stt: SpeechToText | null
  tts: TextToSpeech | null
  /** Why a side is missing, for the call's error. */
  missing: string | null
}

const which = (binary: string): boolean => {
  const bun = (globalThis as { Bun?: { which(n: string): string | null } }).Bun
  return !!bun?.which(binary)
}

export class SpeechProviders {
  private readonly local = { espeak: which('espeak-ng'), sphinx: which('pocketsphinx_continuous') }
  /** Probed on first need: loading the library maps it (and BLAS/LAPACK) into a process that may never use it. */
  private sphinxLibrary: boolean | null = null
  /** One for the process: it keeps a closed call's decoder warm for the next call. */
  private liveSphinx: PocketsphinxLiveStt | null = null
  /** The in-process espeak-ng synthesisers, started on first need; null where the library is absent. */
  private synthesizers: EspeakPool | null | undefined

  constructor(
    private readonly config: Pick<Config, 'providers' | 'speech'>,
    private readonly scripts: SandboxScripts,
  ) {}

  /** The live decoders' pool, once a call has used it (the metrics and the admission rules read it). */
  get decoders(): PoolStats | null {
    return this.liveSphinx?.decoders ?? null
  }

  /** The espeak-ng synthesisers, once a call has used them. */
  get synthesis(): SynthStats | null {
    return this.synthesizers?.stats() ?? null
  }

  /** espeak-ng for anything that speaks locally (a call's agent, the sandbox's callee): in-process when the library loads, else the program. */
  espeak(): EspeakTts {
    if (this.synthesizers === undefined) {
      this.synthesizers = espeakLibraryMissing() === null ? new EspeakPool({ size: this.config.speech.synthesizers ?? availableParallelism() }) : null
    }
    return new EspeakTts('espeak-ng', this.synthesizers)
  }

  /** Frees the live decoders and the synthesisers (the service stops). */
  async close(): Promise<void> {
    const live = this.liveSphinx
    this.liveSphinx = null
    this.synthesizers?.close()
    this.synthesizers = undefined
    await live?.close()
  }

  /** `sandbox`: the call is on the sandbox network (its doubles may stand in). */
  choose(call: { callId: string; sandbox: boolean }): SpeechChoice {
    const stt = this.stt(call)
    const tts = this.tts(call)
    const missing = !stt
      ? 'no speech-to-text is available: set DEEPGRAM_API_KEY or OPENAI_API_KEY, or install pocketsphinx'
      : !tts
        ? 'no text-to-speech is available: set ELEVENLABS_API_KEY, CARTESIA_API_KEY or OPENAI_API_KEY, or install espeak-ng'
        : null
    return { stt, tts, missing }
  }

  private stt({ callId, sandbox }: { callId: string; sandbox: boolean }): SpeechToText | null {
    const p = this.config.providers
    const pick = this.config.speech.stt
    const deepgram = () => (p.deepgramApiKey ? new DeepgramStt({ apiKey: p.deepgramApiKey, baseUrl: p.deepgramBaseUrl }) : null)
    const assemblyai = () => (p.assemblyaiApiKey ? new AssemblyAiStt({ apiKey: p.assemblyaiApiKey, baseUrl: p.assemblyaiBaseUrl }) : null)
    const openai = () => (p.openaiApiKey ? new OpenAiTranscription({ apiKey: p.openaiApiKey, baseUrl: p.openaiBaseUrl }) : null)
    // The live decoder (libpocketsphinx in-process) when the library and model load; the
    // process-per-utterance path only where they do not but the program is there.
    const sphinx = () => {
      this.sphinxLibrary ??= sphinxMissing() === null
      if (this.sphinxLibrary) {
        this.liveSphinx ??= new PocketsphinxLiveStt({ decoders: this.config.speech.decoders, queue: this.config.speech.decoderQueue })
        return this.liveSphinx
      }
      return this.local.sphinx ? new PocketsphinxStt() : null
    }
    const double = () => (sandbox ? new SandboxStt(this.scripts, callId) : null)
    // Deepgram Flux (/v2/listen) on the service's key: it ends the caller's turns itself.
    if (pick === 'deepgram-flux') return p.deepgramApiKey ? new DeepgramFluxStt({ apiKey: p.deepgramApiKey, baseUrl: p.deepgramBaseUrl }) : null
    if (pick === 'deepgram') return deepgram()
    if (pick === 'assemblyai') return assemblyai()
    if (pick === 'openai') return openai()
    if (pick === 'pocketsphinx') return sphinx()
    if (pick === 'sandbox') return double()
    // On the sandbox network the scripted double beats pocketsphinx: the callee's words are known,
    // and pocketsphinx would garble them (docs/api/voice.md gives its word error rate).
    return deepgram() ?? assemblyai() ?? openai() ?? double() ?? sphinx()
  }

  private tts({ sandbox }: { sandbox: boolean }): TextToSpeech | null {
    const p = this.config.providers
    const pick = this.config.speech.tts
    const eleven = () => (p.elevenlabsApiKey ? new ElevenLabsTts({ apiKey: p.elevenlabsApiKey, baseUrl: p.elevenlabsBaseUrl }) : null)
    const openai = () => (p.openaiApiKey ? new OpenAiSpeech({ apiKey: p.openaiApiKey, baseUrl: p.openaiBaseUrl }) : null)
    const cartesia = () => (p.cartesiaApiKey ? new CartesiaTts({ apiKey: p.cartesiaApiKey, baseUrl: p.cartesiaBaseUrl }) : null)
    const espeak = () => (this.local.espeak ? this.espeak() : null)
    const double = () => (sandbox ? new SandboxTts() : null)
    if (pick === 'elevenlabs') return eleven()
    if (pick === 'cartesia') return cartesia()
    if (pick === 'openai') return openai()
    if (pick === 'espeak') return espeak()
    if (pick === 'sandbox') return double()
    return eleven() ?? cartesia() ?? openai() ?? espeak() ?? double()
  }
}
