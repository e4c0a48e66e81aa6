/**
 * Our voices (docs/spec.md `GET /voices`) as each TTS provider's real voice. ElevenLabs ids are its
 * premade voices (https://elevenlabs.io/docs/voices/premade-voices); OpenAI's are the names
 * `/audio/speech` takes; espeak-ng's are its language variants (`espeak-ng --voices`). The local and
 * sandbox engines have one voice per accent at best: close enough for a call with no keys.
 */
// A type, not an interface, so a row reads as a record by provider name (providerVoice).
export type ProviderVoices = {
  elevenlabs: string
  openai: string
  espeak: string
}

export const VOICE_MAP: Record<string, ProviderVoices> = {
  aria: { elevenlabs: '9BWtsMINqrJLrRacOk9x', openai: 'nova', espeak: 'en-us+f3' },
  kabir: { elevenlabs: 'TX3LPaxmHKxFdv7VOQHJ', openai: 'ash', espeak: 'en-029+m3' },
  meera: { elevenlabs: 'XrExE9yKIg1WjnnlVkGX', openai: 'shimmer', espeak: 'en-029+f2' },
  oliver: { elevenlabs: 'JBFqnCBsd6RMkjVDRZzb', openai: 'fable', espeak: 'en-gb+m3' },
  sofia: { elevenlabs: 'EXAVITQu4vr4xnSDxMaL', openai: 'coral', espeak: 'es+f3' },
  leo: { elevenlabs: 'IKne3meq5aSn9XLyUdCD', openai: 'echo', espeak: 'en-us+m1' },
}

/** The provider's voice for one of ours (a voice id unknown to us is taken as the provider's own: a BYOK voice). */
export function providerVoice(provider: string, voice: string): string {
  const mapped = VOICE_MAP[voice]
  if (!mapped) return voice
  const byProvider: Record<string, string | undefined> = mapped
  return byProvider[provider] ?? voice
}
