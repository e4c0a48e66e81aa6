/** Languages the console offers for an agent (SPEC.md Agent `language`); `auto` follows the customer. */
export const LANGUAGES = [
  'English', 'Hindi', 'Tamil', 'Telugu', 'Bengali', 'Marathi', 'Gujarati', 'Kannada', 'Malayalam',
  'Punjabi', 'Urdu', 'Spanish', 'French', 'German', 'Portuguese', 'Arabic', 'Indonesian',
] as const

const CANONICAL = new Map<string, string>(LANGUAGES.map((l) => [l.toLowerCase(), l]))

/** The console's spelling of a language name given in any case, or undefined. */
export const canonicalLanguage = (name: string): string | undefined => CANONICAL.get(name.trim().toLowerCase())
