/**
 * Deepgram Flux, the speech-to-text model that judges turns itself
 * (https://developers.deepgram.com/docs/flux/quickstart): a WebSocket to `/v2/listen` with
 * `model=flux-general-en`, `encoding` (linear16 at 16 kHz, or mulaw at 8 kHz) and `sample_rate` in the query, and its
 * end-of-turn settings `eot_threshold`, `eager_eot_threshold`, `eot_timeout_ms`
 * (https://developers.deepgram.com/docs/flux/configuration); `Authorization: Token`, binary audio
 * in, JSON out: `Connected`, then `TurnInfo` messages whose `event` is StartOfTurn, Update (about
 * every 0.25 s of audio), EagerEndOfTurn, TurnResumed or EndOfTurn, each with the turn's
 * `transcript`, `words` and `end_of_turn_confidence` (https://developers.deepgram.com/docs/flux/state:
 * an eager end's transcript is never empty, a resumed turn follows an eager end only, and an end's
 * transcript is the eager end's before it); a fatal `Error` (`code`, `description`) before the
 * socket closes. `{"type":"CloseStream"}` ends the stream.
 *
 * Chosen as the deepgram provider with a `flux-` model (`isFluxModel`): a BYOK Deepgram key whose
 * model is `flux-general-en`, or `STT_PROVIDER=deepgram-flux` on the service's key. Flux's end
 * of turn is reported through `onTurn`; `finalize` answers the text of the last end of turn at
 * once (or, for the chart's backstop, what was heard of the turn so far).
 */
import { mulaw } from 'alawmulaw'
import WebSocket from 'ws'
import { SpeechError, type SpeechToText, type SpeechToTextOptions, type SttPartial, type SttSession, type SttTurnEvent } from '../../voice/public'

/** Flux's two encodings (quickstart): 16-bit PCM, sent at 16 kHz; μ-law, at the phone line's 8 kHz (a quarter of the bytes). */
export type FluxEncoding = 'linear16' | 'mulaw'
const RATES: Record<FluxEncoding, number> = { linear16: 16_000, mulaw: 8_000 }
export const FLUX_MODEL = 'flux-general-en'
/** Audio held until the socket opens (it opens in ~100–300 ms): 10 s of 16 kHz PCM, oldest dropped past it. */
const MAX_PENDING_BYTES = 10 * 16_000 * 2

/** A Deepgram model that the v2 (Flux) adapter runs, not the v1 live one. */
export const isFluxModel = (model: string | null | undefined): boolean => !!model?.startsWith('flux-')

/** Flux's end-of-turn settings, as the agent sets them (null: Flux's own default; eager null: no eager ends). */
export interface FluxSettings {
  eotThreshold?: number | null
  eagerEotThreshold?: number | null
  eotTimeoutMs?: number | null
}

/**
 * The ranges we accept. Deepgram's configuration page has given two: eot_threshold 0.5–0.9 and
 * later 0.5–1.0, eot_timeout_ms 500–10,000 and later 500–60,000; we take the ranges both allow
 * (1.0 turns Flux's own end of turn off, which this adapter exists for). eager_eot_threshold
 * 0.3–0.9, and no higher than eot_threshold (an eager end after the end means nothing).
 */
export const FLUX_LIMITS = {
  eotThreshold: { min: 0.5, max: 0.9, default: 0.7 },
  eagerEotThreshold: { min: 0.3, max: 0.9 },
  eotTimeoutMs: { min: 500, max: 10_000, default: 5_000 },
} as const

/** What is wrong with the settings, naming the field; null when they are fine. */
export function fluxSettingsError(s: FluxSettings): string | null {
  for (const field of ['eotThreshold', 'eagerEotThreshold', 'eotTimeoutMs'] as const) {
    const v = s[field]
    const { min, max } = FLUX_LIMITS[field]
    if (v !== undefined && v !== null && !(Number.isFinite(v) && v >= min && v <= max)) return `${field} must be between ${min} and ${max}`
  }
  const eot = s.eotThreshold ?? FLUX_LIMITS.eotThreshold.default
  if (s.eagerEotThreshold != null && s.eagerEotThreshold > eot) return `eagerEotThreshold must not be above eotThreshold (${eot})`
  if (s.eotTimeoutMs != null && !Number.isInteger(s.eotTimeoutMs)) return 'eotTimeoutMs must be a whole number of ms'
  return null
}

/** Flux's turn info (https://developers.deepgram.com/docs/flux/state). */
interface FluxMessage {
  type?: string
  event?: string
  transcript?: string
  end_of_turn_confidence?: number
  code?: string
  description?: string
  error?: string
}

export class DeepgramFluxStt implements SpeechToText {
  readonly name = 'deepgram'

  constructor(private readonly options: { apiKey: string; baseUrl?: string; encoding?: FluxEncoding } & FluxSettings) {}

  async open(o: SpeechToTextOptions): Promise<SttSession> {
    // The agent's settings (`voice.flux`) over the adapter's own.
    const settings: FluxSettings = { ...this.options, ...(o.flux ?? {}) }
    const { apiKey } = this.options
    const { eotThreshold, eagerEotThreshold, eotTimeoutMs } = settings
    const invalid = fluxSettingsError(settings)
    if (invalid) throw new SpeechError('deepgram', `Deepgram Flux settings: ${invalid}`)
    const base = (this.options.baseUrl ?? 'wss://api.deepgram.com').replace(/\/$/, '')
    const encoding = this.options.encoding ?? 'linear16'
    const rate = RATES[encoding]
    const query = new URLSearchParams({ model: o.model ?? FLUX_MODEL, encoding, sample_rate: String(rate) })
    if (eotThreshold != null) query.set('eot_threshold', String(eotThreshold))
    if (eagerEotThreshold != null) query.set('eager_eot_threshold', String(eagerEotThreshold))
    if (eotTimeoutMs != null) query.set('eot_timeout_ms', String(eotTimeoutMs))
    const ws = new WebSocket(`${base}/v2/listen?${query}`, { headers: { Authorization: `Token ${apiKey}` } })
    const clean = (m: string) => m.split(apiKey).join('***')
    let pending: Buffer[] = []
    let pendingBytes = 0
    /** The turn's transcript so far, and the text of the last end of turn not yet taken. */
    let heard = ''
    let ended: string | null = null
    let failure: SpeechError | null = null
    const partials: ((p: SttPartial) => void)[] = []
    const turns: ((e: SttTurnEvent) => void)[] = []
    const tell = (e: SttTurnEvent) => {
      for (const l of turns) l(e)
    }
    const fail = (message: string) => {
      if (failure) return
      failure = new SpeechError('deepgram', clean(message))
      // A turn in progress ends, so the pipeline asks for its words and hears of the failure.
      tell({ type: 'end', text: '' })
    }
    ws.on('unexpected-response', (_req, res) => {
      const why = res.statusCode === 401 || res.statusCode === 403 ? ' (the API key was rejected)' : res.statusCode === 429 ? ' (rate limited: too many streams at once)' : ''
      fail(`Deepgram refused the Flux stream: HTTP ${res.statusCode}${why}`)
    })
    ws.on('error', (err) => fail(`Deepgram Flux stream error: ${err.message}`))
    ws.on('close', (code, reason) => {
      if (code !== 1000) fail(`Deepgram closed the Flux stream (${code}${reason.length ? ` ${reason}` : ''})`)
    })
    ws.on('open', () => {
      for (const b of pending) ws.send(b)
      pending = []
      pendingBytes = 0
    })
    ws.on('message', (data, binary) => {
      if (binary) return
      let m: FluxMessage
      try {
        m = JSON.parse(String(data))
      } catch {
        return
      }
      if (m.type === 'Error') return fail(`Deepgram Flux: ${m.description ?? m.error ?? 'error'}${m.code ? ` (${m.code})` : ''}`)
      if (m.type !== 'TurnInfo') return
      const text = (m.transcript ?? '').trim()
      const confidence = m.end_of_turn_confidence
      if (m.event === 'StartOfTurn') {
        // An end nobody took was words the pipeline let go (said over the agent): not this turn's.
        ended = null
        heard = text
        return tell({ type: 'start' })
      }
      if (m.event === 'TurnResumed') return tell({ type: 'resumed' })
      if (text !== heard || m.event === 'EndOfTurn') {
        heard = text
        for (const l of partials) l({ text, stable: m.event === 'EndOfTurn', endOfSpeech: m.event === 'EndOfTurn' })
      }
      if (m.event === 'EagerEndOfTurn') tell({ type: 'eager-end', text, ...(confidence === undefined ? {} : { confidence }) })
      if (m.event === 'EndOfTurn') {
        ended = text
        heard = ''
        tell({ type: 'end', text, ...(confidence === undefined ? {} : { confidence }) })
      }
    })
    return {
      sampleRate: rate,
      capabilities: { streaming: true, interimWords: true, punctuation: false, endOfTurn: true, eagerEndOfTurn: eagerEotThreshold != null, wordTimings: true },
      push(pcm) {
        if (failure) return
        const bytes = encoding === 'mulaw' ? Buffer.from(mulaw.encode(pcm)) : Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)
        if (ws.readyState === WebSocket.OPEN) return ws.send(bytes)
        pending.push(Buffer.from(bytes))
        pendingBytes += bytes.length
        while (pendingBytes > MAX_PENDING_BYTES && pending.length > 1) pendingBytes -= pending.shift()!.length
      },
      async finalize() {
        if (failure) throw failure
        const text = ended ?? heard
        ended = null
        heard = ''
        return text
      },
      onPartial(listener) {
        partials.push(listener)
      },
      onTurn(listener) {
        turns.push(listener)
      },
      async close() {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(JSON.stringify({ type: 'CloseStream' }))
          ws.close(1000)
        } else if (ws.readyState === WebSocket.CONNECTING) ws.terminate()
      },
    }
  }
}
