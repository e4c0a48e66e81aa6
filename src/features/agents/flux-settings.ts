/**
 * The agent's Deepgram Flux settings (`voice.flux`): each number's range is the schema's; what
 * only the pair can say (an eager threshold above the end threshold) is checked here, naming the field.
 */

import { type FluxSettings, fluxSettingsError } from '../../providers/stt/deepgram-flux'
import { invalid } from '../../refusals'

export interface StoredFlux {
  eotThreshold: number | null
  eagerEotThreshold: number | null
  eotTimeoutMs: number | null
}

/** Flux's own defaults for every setting (and no eager ends): agents stored before `voice.flux` read as this. */
export const NO_FLUX: StoredFlux = { eotThreshold: null, eagerEotThreshold: null, eotTimeoutMs: null }

/** The stored settings, every member present (null: Flux's default). */
export function checkFlux(input: FluxSettings): StoredFlux {
  const wrong = fluxSettingsError(input)
  if (wrong) throw invalid(`voice.flux.${wrong.split(' ')[0]}`, wrong.slice(wrong.indexOf(' ') + 1))
  return { eotThreshold: input.eotThreshold ?? null, eagerEotThreshold: input.eagerEotThreshold ?? null, eotTimeoutMs: input.eotTimeoutMs ?? null }
}
