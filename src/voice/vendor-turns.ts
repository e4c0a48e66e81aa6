/**
 * An engine that judges the caller's turn itself (its capabilities say `endOfTurn`: Deepgram
 * Flux, AssemblyAI v3): its turn events as the turn chart's (machines/voice-turn-vendor.ts), and
 * what the end-of-turn rules say meanwhile (only a backstop: the engine ends the turn).
 */
import type { VoiceTurnEvent } from '../../machines/voice-turn'
import type { EndOfTurn } from './end-of-turn'
import type { SttTurnEvent } from './ports/stt'

/**
 * A pause the engine has not ended after this long is ended by the chart on the words so far: Flux
 * ends a turn itself after `eot_timeout_ms` of silence and AssemblyAI after `max_turn_silence`,
 * each at most 10,000 ms as we accept them (deepgram-flux.ts FLUX_LIMITS, the agents' model
 * ASSEMBLYAI_SILENCE_MAX_MS), and a second more lets the message arrive. Only an engine gone quiet reaches it.
 */
export const VENDOR_TURN_BACKSTOP_MS = 11_000

/** The rules' verdict on a pause while the engine judges the turn. */
export const VENDOR_JUDGED: EndOfTurn = { waitMs: VENDOR_TURN_BACKSTOP_MS, shape: 'vendor', why: 'the speech engine judges the end of turn: waiting for it' }

/**
 * The chart's event for an engine's turn event; `words`: the turn's words with those held from
 * before the caller went on, `lastSpeech`: the caller's last speech as the VAD heard it. A start
 * of turn is none: barge-in stays the VAD's, which hears speech sooner.
 */
export function chartEventOf(event: SttTurnEvent, words: (text: string) => string, lastSpeech: number): VoiceTurnEvent | null {
  if (event.type === 'eager-end') return { type: 'turn.eager', text: words(event.text) }
  if (event.type === 'resumed') return { type: 'turn.resumed' }
  if (event.type === 'end') return { type: 'turn.end', text: event.text, at: lastSpeech }
  return null
}
