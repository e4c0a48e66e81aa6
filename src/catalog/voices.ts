/** The service's voices. Every voice speaks every supported language (docs/spec.md Voice). */
export interface VoiceInfo {
  id: string
  name: string
  accent: string
  tier: 'standard' | 'premium'
  description: string | null
}

export const VOICES: readonly VoiceInfo[] = [
  { id: 'aria', name: 'Aria', accent: 'American', tier: 'standard', description: 'Warm, even pace; a safe default' },
  { id: 'kabir', name: 'Kabir', accent: 'Indian', tier: 'standard', description: 'Friendly and clear' },
  { id: 'meera', name: 'Meera', accent: 'Indian', tier: 'premium', description: 'Calm, natural pauses' },
  { id: 'oliver', name: 'Oliver', accent: 'British', tier: 'standard', description: null },
  { id: 'sofia', name: 'Sofia', accent: 'Spanish', tier: 'premium', description: 'Bright and expressive' },
  { id: 'leo', name: 'Leo', accent: 'Australian', tier: 'standard', description: null },
]

export const DEFAULT_VOICE = 'aria'
const IDS = new Set(VOICES.map((v) => v.id))
export const isVoice = (id: string): boolean => IDS.has(id)

/** The price band of a voice; one the catalogue does not know (a BYOK vendor's) is standard. */
export const voiceTier = (id: string | null): 'standard' | 'premium' => VOICES.find((v) => v.id === id)?.tier ?? 'standard'
