/**
 * The agent's voice dials as stored (`voice.speed`, `voice.patience`, `voice.interruptions`;
 * src/voice/dials.ts says what each does on a call): their checks beyond the schema's, and the
 * defaults an agent or a version stored before them reads as.
 */

import { invalid } from '../../refusals'
import { DEFAULT_DIALS, type VoiceDials } from '../../voice/public'
import type { StoredVoice } from './repository'

/** Backchannel words trimmed, blank ones refused, repeats (any letter case) kept once. */
export function checkInterruptions(given: VoiceDials['interruptions']): VoiceDials['interruptions'] {
  const seen = new Set<string>()
  const backchannels: string[] = []
  for (const [i, word] of given.backchannels.entries()) {
    const text = word.trim().replace(/\s+/g, ' ')
    if (!/[a-z]/i.test(text)) throw invalid(`voice.interruptions.backchannels[${i}]`, 'must have a word in it')
    if (seen.has(text.toLowerCase())) continue
    seen.add(text.toLowerCase())
    backchannels.push(text)
  }
  return { enabled: given.enabled, minSpeechMs: given.minSpeechMs, minWords: given.minWords, backchannels }
}

/** A stored voice with every dial, the defaults where it has none (stored before they existed). */
export function withDials<V extends Partial<Pick<StoredVoice, 'speed' | 'patience' | 'interruptions'>>>(voice: V): V & VoiceDials {
  return {
    ...voice,
    speed: voice.speed ?? DEFAULT_DIALS.speed,
    patience: { ...DEFAULT_DIALS.patience, ...voice.patience },
    interruptions: { ...DEFAULT_DIALS.interruptions, ...voice.interruptions },
  }
}

/** The dials a call runs with, from the agent (the version) it talks as. */
export const dialsOf = (voice: Partial<Pick<StoredVoice, 'speed' | 'patience' | 'interruptions'>>): VoiceDials => {
  const { speed, patience, interruptions } = withDials(voice)
  return { speed, patience, interruptions }
}
