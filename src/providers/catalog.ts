/**
 * What a developer's own provider key reaches, asked of the vendor's real API (BYOK verifies a
 * key this way before saving it, and lists models and voices from it):
 * - OpenAI and any OpenAI-compatible server: `GET {base}/models` (Bearer); Azure OpenAI: its
 *   model list under the resource endpoint (`api-key`), the deployment being what chat reaches;
 * - Anthropic: `GET /v1/models` (`x-api-key`, `anthropic-version`), paged;
 * - Deepgram: `GET /v1/projects` (`Authorization: Token`) proves the key, `GET /v1/models` lists
 *   its speech-to-text models;
 * - ElevenLabs: `GET /v1/models` (`xi-api-key`), text-to-speech ones; voices `GET /v1/voices`.
 * - Cartesia: `GET /voices` (`Authorization: Bearer`, `Cartesia-Version`; cursor pages of `data`
 *   with `has_more`, next by `starting_after`) proves the key and lists its voices; Cartesia has no
 *   model list, so its models are the ones its docs name (CARTESIA_MODELS).
 * - AssemblyAI: `GET /v3/token?expires_in_seconds=60` on its streaming host (`Authorization: <key>`,
 *   https://www.assemblyai.com/docs/streaming/api-spec/generate-streaming-token) proves the key reaches
 *   streaming; its streaming models are a fixed set (ASSEMBLYAI_MODELS), no list endpoint.
 *
 * A vendor answering 401/403 rejected the key (KeyRejected); no answer, a 5xx or a 429 is the
 * vendor being unavailable (VendorUnavailable): neither saves anything.
 */
import { createLanguageModel, isLlmError, type LlmProvider } from './llm'
import { ASSEMBLYAI_MODELS } from './stt/assemblyai'
import { CARTESIA_VERSION } from './tts/cartesia'

export type Job = 'stt' | 'llm' | 'tts'
export const JOBS: readonly Job[] = ['stt', 'llm', 'tts']

/** Provider ids per job: those we have adapters for, so a saved key can also run calls and replies. */
export const JOB_PROVIDERS: Record<Job, readonly string[]> = {
  stt: ['deepgram', 'openai', 'assemblyai'],
  llm: ['openai', 'anthropic', 'azure', 'openai-compatible'],
  tts: ['elevenlabs', 'openai', 'cartesia'],
}

export interface Credentials {
  apiKey?: string
  /** openai-compatible: the server's base URL (…/v1). */
  baseUrl?: string
  /** azure: the resource endpoint (https://<resource>.openai.azure.com). */
  endpoint?: string
  /** azure: the deployment chat requests go to. */
  deployment?: string
  /** azure: the data-plane API version (the adapter's default when absent). */
  apiVersion?: string
}

/** Where each vendor is reached: the service's configured base URLs (fakes in tests), else the vendor's own. */
export interface VendorEndpoints {
  openaiBaseUrl?: string
  anthropicBaseUrl?: string
  /** Deepgram's streaming base (wss://); its REST API is the same host over https. */
  deepgramBaseUrl?: string
  elevenlabsBaseUrl?: string
  /** Cartesia's REST base (https://); its TTS socket is the same host over wss. */
  cartesiaBaseUrl?: string
  /** AssemblyAI's streaming host (wss://); its token endpoint is the same host over https. */
  assemblyaiBaseUrl?: string
}

export class KeyRejected extends Error {
  override readonly name = 'KeyRejected'
  constructor(
    readonly provider: string,
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export class VendorUnavailable extends Error {
  override readonly name = 'VendorUnavailable'
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message)
  }
}

/** Listing a catalogue needs a few seconds at most; 10 s is a vendor that is not answering. */
export const CATALOG_TIMEOUT_MS = 10_000

export const openaiBase = (e: VendorEndpoints) => (e.openaiBaseUrl ?? 'https://api.openai.com/v1').replace(/\/$/, '')
export const elevenlabsBase = (e: VendorEndpoints) => (e.elevenlabsBaseUrl ?? 'https://api.elevenlabs.io').replace(/\/$/, '')
export const cartesiaBase = (e: VendorEndpoints) => (e.cartesiaBaseUrl ?? 'https://api.cartesia.ai').replace(/\/$/, '')
const deepgramRest = (e: VendorEndpoints) => (e.deepgramBaseUrl ?? 'wss://api.deepgram.com').replace(/^ws/, 'http').replace(/\/$/, '')
const assemblyaiRest = (e: VendorEndpoints) => (e.assemblyaiBaseUrl ?? 'wss://streaming.assemblyai.com').replace(/^ws/, 'http').replace(/\/$/, '')

/** The LLM adapter's config for a BYOK llm key (also what replies run on). */
export function llmConfig(provider: string, c: Credentials, model: string, e: VendorEndpoints) {
  const baseUrl = provider === 'openai' ? e.openaiBaseUrl : provider === 'anthropic' ? e.anthropicBaseUrl : provider === 'azure' ? c.endpoint : c.baseUrl
  return { provider: provider as LlmProvider, model, apiKey: c.apiKey, baseUrl, deployment: c.deployment, apiVersion: c.apiVersion }
}

async function getJson(provider: string, url: string, headers: Record<string, string>, secret: string | undefined): Promise<unknown> {
  const hide = (text: string) => (secret ? text.split(secret).join('***') : text)
  let res: Response
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(CATALOG_TIMEOUT_MS) })
  } catch (err) {
    throw new VendorUnavailable(provider, hide(`could not reach ${provider}: ${(err as Error).message}`))
  }
  if (res.status === 401 || res.status === 403) throw new KeyRejected(provider, res.status, `${provider} rejected the key (HTTP ${res.status})`)
  if (res.status === 429 || res.status >= 500) throw new VendorUnavailable(provider, `${provider} is unavailable (HTTP ${res.status})`)
  if (!res.ok) throw new KeyRejected(provider, res.status, `${provider} refused the request (HTTP ${res.status}): check the credentials`)
  return res.json().catch(() => {
    throw new VendorUnavailable(provider, `${provider} answered something that is not JSON`)
  })
}

const unique = (ids: string[]) => [...new Set(ids)]

/** The models a key is offered for a job, as the provider names them. Throws KeyRejected / VendorUnavailable. */
export async function offeredModels(job: Job, provider: string, c: Credentials, e: VendorEndpoints): Promise<string[]> {
  if (provider === 'deepgram') {
    const auth = { authorization: `Token ${c.apiKey}` }
    await getJson(provider, `${deepgramRest(e)}/v1/projects`, auth, c.apiKey)
    const body = (await getJson(provider, `${deepgramRest(e)}/v1/models`, auth, c.apiKey)) as { stt?: { canonical_name?: string; name?: string }[] }
    return unique((body.stt ?? []).map((m) => m.canonical_name ?? m.name ?? '').filter(Boolean))
  }
  if (provider === 'assemblyai') {
    // A token lives 60 s unused and is never redeemed: asking for one costs nothing.
    await getJson(provider, `${assemblyaiRest(e)}/v3/token?expires_in_seconds=60`, { authorization: c.apiKey ?? '' }, c.apiKey)
    return [...ASSEMBLYAI_MODELS]
  }
  if (provider === 'elevenlabs') {
    const body = (await getJson(provider, `${elevenlabsBase(e)}/v1/models`, { 'xi-api-key': c.apiKey ?? '' }, c.apiKey)) as { model_id?: string; can_do_text_to_speech?: boolean }[]
    return unique((Array.isArray(body) ? body : []).filter((m) => m.can_do_text_to_speech !== false && m.model_id).map((m) => m.model_id!))
  }
  if (provider === 'cartesia') {
    await cartesiaVoicePage(c, e, null, 1)
    return [...CARTESIA_MODELS]
  }
  // OpenAI-protocol and Anthropic lists go through the LLM adapters, which already speak them.
  const model = createLanguageModel({ ...llmConfig(provider, c, c.deployment ?? 'list', e) })
  let ids: string[]
  try {
    ids = (await model.listModels()).map((m) => m.id)
  } catch (err) {
    if (!isLlmError(err)) throw err
    if (err.kind === 'auth' || err.kind === 'bad_request') throw new KeyRejected(provider, err.kind === 'auth' ? 401 : 400, err.message)
    throw new VendorUnavailable(provider, err.message)
  }
  // OpenAI lists every model of the account: each job keeps the ones it can run.
  if (job === 'llm') return provider === 'openai' ? ids.filter((id) => !/whisper|transcribe|tts|embedding|dall-e|moderation/.test(id)) : ids
  return ids.filter((id) => (job === 'stt' ? /whisper|transcribe/ : /tts/).test(id))
}

export interface OfferedVoice {
  id: string
  name: string
  /** A clip the provider hosts, or null. */
  sample: string | null
  /** A voice of the llm key's Realtime models (byok/choices.ts). */
  realtime?: boolean
}

/** OpenAI's text-to-speech voices (https://platform.openai.com/docs/guides/text-to-speech): a fixed set, no hosted clips. */
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer']

/** Cartesia's text-to-speech models (https://docs.cartesia.ai/build-with-cartesia/tts-models): the first is the adapter's default. */
export const CARTESIA_MODELS = ['sonic-3', 'sonic-3.5', 'sonic-2', 'sonic-turbo'] as const
/** Cartesia pages voices 100 at most; 10 pages is more voices than a picker shows. */
const CARTESIA_VOICE_PAGES = 10

type CartesiaVoice = { id: string; name: string; preview_file_url?: string | null }

function cartesiaVoicePage(c: Credentials, e: VendorEndpoints, after: string | null, limit: number): Promise<{ data?: CartesiaVoice[]; has_more?: boolean }> {
  const query = new URLSearchParams({ limit: String(limit), 'expand[]': 'preview_file_url', ...(after ? { starting_after: after } : {}) })
  const headers = { authorization: `Bearer ${c.apiKey ?? ''}`, 'cartesia-version': CARTESIA_VERSION }
  return getJson('cartesia', `${cartesiaBase(e)}/voices?${query}`, headers, c.apiKey) as Promise<{ data?: CartesiaVoice[]; has_more?: boolean }>
}

export async function offeredVoices(provider: string, c: Credentials, e: VendorEndpoints): Promise<OfferedVoice[]> {
  if (provider === 'openai') return OPENAI_VOICES.map((id) => ({ id, name: id[0]!.toUpperCase() + id.slice(1), sample: null }))
  if (provider === 'cartesia') {
    const voices: CartesiaVoice[] = []
    for (let page = 0, after: string | null = null; page < CARTESIA_VOICE_PAGES; page++) {
      const body = await cartesiaVoicePage(c, e, after, 100)
      voices.push(...(body.data ?? []))
      after = voices.at(-1)?.id ?? null
      if (!body.has_more || !after) break
    }
    return voices.map((v) => ({ id: v.id, name: v.name, sample: v.preview_file_url ?? null }))
  }
  const body = (await getJson(provider, `${elevenlabsBase(e)}/v1/voices`, { 'xi-api-key': c.apiKey ?? '' }, c.apiKey)) as { voices?: { voice_id: string; name: string; preview_url?: string | null }[] }
  return (body.voices ?? []).map((v) => ({ id: v.voice_id, name: v.name, sample: v.preview_url ?? null }))
}

/**
 * A short clip of a voice: ElevenLabs answers MP3 (`POST /v1/text-to-speech/{voice}`), OpenAI a
 * WAV (`POST /audio/speech`, `response_format: wav`), Cartesia a WAV (`POST /tts/bytes`).
 */
export async function previewVoice(provider: string, c: Credentials, e: VendorEndpoints, voice: string, text: string, model: string | null): Promise<{ contentType: string; audio: ArrayBuffer }> {
  const request: { url: string; headers: Record<string, string>; body: unknown; type: string } =
    provider === 'cartesia'
      ? {
          url: `${cartesiaBase(e)}/tts/bytes`,
          headers: { authorization: `Bearer ${c.apiKey}`, 'cartesia-version': CARTESIA_VERSION },
          body: { model_id: model ?? CARTESIA_MODELS[0], transcript: text, voice: { mode: 'id', id: voice }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24_000 } },
          type: 'audio/wav',
        }
      : provider === 'openai'
        ? {
            url: `${openaiBase(e)}/audio/speech`,
            headers: { authorization: `Bearer ${c.apiKey}` },
            body: { model: model ?? 'gpt-4o-mini-tts', voice, input: text, response_format: 'wav' },
            type: 'audio/wav',
          }
        : {
            url: `${elevenlabsBase(e)}/v1/text-to-speech/${encodeURIComponent(voice)}?output_format=mp3_44100_128`,
            headers: { 'xi-api-key': c.apiKey ?? '' },
            body: { text, model_id: model ?? 'eleven_flash_v2_5' },
            type: 'audio/mpeg',
          }
  let res: Response
  try {
    res = await fetch(request.url, {
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json' },
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(CATALOG_TIMEOUT_MS),
    })
  } catch (err) {
    throw new VendorUnavailable(provider, `could not reach ${provider}: ${(err as Error).message}`)
  }
  if (res.status === 401 || res.status === 403) throw new KeyRejected(provider, res.status, `${provider} rejected the key (HTTP ${res.status})`)
  if (!res.ok) throw new VendorUnavailable(provider, `${provider} could not make the preview (HTTP ${res.status})`)
  return { contentType: request.type, audio: await res.arrayBuffer() }
}
