/**
 * An agent's settings for a vendor's own turn detection (`voice.assemblyai`, docs/api/voice.md
 * "AssemblyAI"): their checks beyond the schema's. They apply only when the call's speech-to-text
 * is that vendor's; the schema bounds each number.
 */
import { invalid } from '../../refusals'
import type { StoredVoice } from './repository'

type AssemblyAi = NonNullable<StoredVoice['assemblyai']>

/** Every member present (null where unset); a floor above the ceiling is refused. */
export function checkAssemblyAi(given: Partial<AssemblyAi>): AssemblyAi {
  const settings: AssemblyAi = {
    endOfTurnConfidence: given.endOfTurnConfidence ?? null,
    minTurnSilenceMs: given.minTurnSilenceMs ?? null,
    maxTurnSilenceMs: given.maxTurnSilenceMs ?? null,
    formatTurns: given.formatTurns ?? null,
  }
  const { minTurnSilenceMs: min, maxTurnSilenceMs: max } = settings
  if (min !== null && max !== null && min > max) throw invalid('voice.assemblyai.minTurnSilenceMs', `must not be more than maxTurnSilenceMs (${max})`)
  return settings
}
