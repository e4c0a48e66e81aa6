/** Languages the console offers for an agent (docs/spec.md Agent `language`); `auto` follows the customer. */
export const LANGUAGES = [
  'English',
  'Hindi',
  'Tamil',
  'Telugu',
  'Bengali',
  'Marathi',
  'Gujarati',
  'Kannada',
  'Malayalam',
  'Punjabi',
  'Urdu',
  'Spanish',
  'French',
  'German',
  'Portuguese',
  'Arabic',
  'Indonesian',
] as const

const CANONICAL = new Map<string, string>(LANGUAGES.map((l) => [l.toLowerCase(), l]))

/** The console's spelling of a language name given in any case, or undefined. */
export const canonicalLanguage = (name: string): string | undefined => CANONICAL.get(name.trim().toLowerCase())

/** Each language's BCP-47 code, for the speech engines a call uses (ISO 639-1). */
const CODES: Record<(typeof LANGUAGES)[number], string> = {
  English: 'en',
  Hindi: 'hi',
  Tamil: 'ta',
  Telugu: 'te',
  Bengali: 'bn',
  Marathi: 'mr',
  Gujarati: 'gu',
  Kannada: 'kn',
  Malayalam: 'ml',
  Punjabi: 'pa',
  Urdu: 'ur',
  Spanish: 'es',
  French: 'fr',
  German: 'de',
  Portuguese: 'pt',
  Arabic: 'ar',
  Indonesian: 'id',
}

/** An agent's language (a name from LANGUAGES, `auto`, or a code) as a BCP-47 code; `auto` and unknown names are English. */
export function languageCode(language: string | null | undefined): string {
  const l = (language ?? '').trim()
  if (/^[a-z]{2}(-[a-z]{2})?$/i.test(l)) return l.toLowerCase()
  const name = canonicalLanguage(l) as (typeof LANGUAGES)[number] | undefined
  return name ? CODES[name] : 'en'
}
