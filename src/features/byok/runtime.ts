/**
 * Calls and replies of a BYOK workspace run on its keys: the language model of the llm key (the
 * agent's choice among its models, else the key's model), and the speech engines of the stt and
 * tts keys. There is no fallback to the service's providers: a request that fails, fails the
 * reply or the call, and the developer hears of it (a notification naming the provider and the
 * reason) at most once a UTC day per provider.
 */
import type { Clock } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { cartesiaBase, elevenlabsBase, type Job, llmConfig, openaiBase, type VendorEndpoints } from '../../providers/catalog'
import { createLanguageModel, type LanguageModel, type LlmEvent, type StreamRequest } from '../../providers/llm'
import { isRealtimeModel, type RealtimeTurnDetection } from '../../providers/realtime/openai'
import { AssemblyAiStt } from '../../providers/stt/assemblyai'
import { DeepgramStt } from '../../providers/stt/deepgram'
import { DeepgramFluxStt, isFluxModel } from '../../providers/stt/deepgram-flux'
import { OpenAiTranscription } from '../../providers/stt/openai'
import { CartesiaTts } from '../../providers/tts/cartesia'
import { ElevenLabsTts } from '../../providers/tts/elevenlabs'
import { OpenAiSpeech } from '../../providers/tts/openai'
import type { SpeechToText, SpeechToTextOptions, SttSession, SynthesisOptions, TextToSpeech } from '../../voice/public'
import type { NotificationService } from '../notifications/public'
import type { ByokChoices } from './choices'
import type { ByokService, OpenKey } from './service'

type Failed = (reason: string) => Promise<void>

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** `work` as it was, its failure reported first unless the caller aborted it. */
async function reported<T>(work: () => Promise<T>, signal: AbortSignal | undefined, failed: Failed): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (!signal?.aborted) await failed(reasonOf(err))
    throw err
  }
}

/** `stream()` as it was (started when iterated), a failure while it runs reported first unless the caller aborted it. */
async function* reportedStream<T>(stream: () => AsyncIterable<T>, signal: AbortSignal | undefined, failed: Failed): AsyncIterable<T> {
  try {
    yield* stream()
  } catch (err) {
    if (!signal?.aborted) await failed(reasonOf(err))
    throw err
  }
}

class NotifyingModel implements LanguageModel {
  constructor(
    private readonly inner: LanguageModel,
    private readonly failed: Failed,
  ) {}
  get id() {
    return this.inner.id
  }
  get provider() {
    return this.inner.provider
  }
  stream(req: StreamRequest): AsyncIterable<LlmEvent> {
    return reportedStream(() => this.inner.stream(req), req.signal, this.failed)
  }
}

class NotifyingStt implements SpeechToText {
  constructor(
    private readonly inner: SpeechToText,
    private readonly model: string,
    private readonly failed: Failed,
  ) {}
  get name() {
    return this.inner.name
  }
  async open(options: SpeechToTextOptions): Promise<SttSession> {
    // Opening is reported whatever the options' signal says (as before: a refused key is news).
    const session = await reported(() => this.inner.open({ ...options, model: options.model ?? this.model }), undefined, this.failed)
    const finalize = session.finalize.bind(session)
    session.finalize = (signal) => reported(() => finalize(signal), signal, this.failed)
    return session
  }
}

class NotifyingTts implements TextToSpeech {
  constructor(
    private readonly inner: TextToSpeech,
    private readonly failed: Failed,
  ) {}
  get name() {
    return this.inner.name
  }
  get sampleRate() {
    return this.inner.sampleRate
  }
  close(): void {
    this.inner.close?.()
  }
  synthesize(text: string, options: SynthesisOptions): AsyncIterable<Int16Array> {
    return reportedStream(() => this.inner.synthesize(text, options), options.signal, this.failed)
  }
}

export interface ByokSpeech {
  stt: SpeechToText
  tts: TextToSpeech
  /** The agent's voice choice among the key's voices; null: the agent's own voice. */
  voice: string | null
}

/** A call on a speech-to-speech model (calls/live/realtime-call.ts): where it connects, as what, and whom to tell when it fails. */
export interface ByokRealtime {
  apiKey: string
  baseUrl: string
  model: string
  voice: string
  turnDetection: RealtimeTurnDetection
  /** The key's failure notice (at most once a UTC day, as every BYOK failure). */
  failed: (reason: string) => Promise<void>
}

export class ByokRuntime {
  constructor(
    private readonly deps: {
      byok: ByokService
      choices: ByokChoices
      endpoints: VendorEndpoints
      notifications: NotificationService
      clock: Clock
    },
  ) {}

  /** Whether the workspace's voice key offers `voice` (a call's `overrides.voice`); null while BYOK is off for it. */
  offersVoice(ws: WorkspaceDoc, voice: string): Promise<boolean | null> {
    return this.deps.choices.offersVoice(ws, voice)
  }

  /** At most once a UTC day per provider and key owner. */
  private failed(owner: string, job: Job, provider: string): Failed {
    return async (reason) => {
      const day = new Date(this.deps.clock.now()).toISOString().slice(0, 10)
      await this.deps.notifications.notify({
        workspaceId: owner,
        kind: 'byok.failed',
        title: `Your ${provider} key failed`,
        body: `A ${job} request on your own ${provider} key failed: ${reason}. BYOK does not fall back to the service's providers, so the reply or call failed.`,
        data: { provider, job, reason },
        key: `byok_failed:${owner}:${provider}:${day}`,
      })
    }
  }

  /** The agent's language model on the workspace's keys; null when BYOK is not in use. */
  async model(ws: WorkspaceDoc, agentId: string): Promise<LanguageModel | null> {
    const keys = await this.deps.byok.effective(ws)
    if (!keys) return null
    const llm = keys.keys.llm
    const model = await this.deps.choices.modelFor(ws, agentId, keys)
    return new NotifyingModel(createLanguageModel(llmConfig(llm.provider, llm.credentials, model, this.deps.endpoints)), this.failed(keys.owner, 'llm', llm.provider))
  }

  /**
   * The agent's Realtime model on the workspace's OpenAI llm key, when that is its model: the call
   * then runs on it in place of the speech engines and the language model. Null otherwise.
   */
  async realtime(ws: WorkspaceDoc, agentId: string): Promise<ByokRealtime | null> {
    const keys = await this.deps.byok.effective(ws)
    if (keys?.keys.llm.provider !== 'openai') return null
    const model = await this.deps.choices.modelFor(ws, agentId, keys)
    if (!isRealtimeModel(model)) return null
    const { voice, turnDetection } = await this.deps.choices.realtimeFor(ws, agentId)
    const apiKey = keys.keys.llm.credentials.apiKey ?? ''
    return { apiKey, baseUrl: openaiBase(this.deps.endpoints), model, voice, turnDetection, failed: this.failed(keys.owner, 'llm', 'openai') }
  }

  /** A call's speech engines on the workspace's keys; null when BYOK is not in use. */
  async speech(ws: WorkspaceDoc, agentId: string): Promise<ByokSpeech | null> {
    const keys = await this.deps.byok.effective(ws)
    if (!keys) return null
    const { stt, tts } = keys.keys
    return {
      stt: new NotifyingStt(this.sttOf(stt), stt.model, this.failed(keys.owner, 'stt', stt.provider)),
      tts: new NotifyingTts(this.ttsOf(tts), this.failed(keys.owner, 'tts', tts.provider)),
      voice: await this.deps.choices.voiceFor(ws, agentId),
    }
  }

  private sttOf(key: OpenKey): SpeechToText {
    const apiKey = key.credentials.apiKey ?? ''
    if (key.provider === 'deepgram')
      return isFluxModel(key.model) ? new DeepgramFluxStt({ apiKey, baseUrl: this.deps.endpoints.deepgramBaseUrl }) : new DeepgramStt({ apiKey, baseUrl: this.deps.endpoints.deepgramBaseUrl })
    if (key.provider === 'assemblyai') return new AssemblyAiStt({ apiKey, baseUrl: this.deps.endpoints.assemblyaiBaseUrl })
    return new OpenAiTranscription({ apiKey, baseUrl: openaiBase(this.deps.endpoints), model: key.model })
  }

  private ttsOf(key: OpenKey): TextToSpeech {
    const apiKey = key.credentials.apiKey ?? ''
    if (key.provider === 'elevenlabs') return new ElevenLabsTts({ apiKey, baseUrl: elevenlabsBase(this.deps.endpoints), model: key.model })
    if (key.provider === 'cartesia') return new CartesiaTts({ apiKey, baseUrl: cartesiaBase(this.deps.endpoints), model: key.model })
    return new OpenAiSpeech({ apiKey, baseUrl: openaiBase(this.deps.endpoints), model: key.model })
  }
}
