/**
 * Opt-out keywords: the words carriers and WhatsApp/SMS compliance rules treat as "stop messaging
 * me" (CTIA's STOP, UNSUBSCRIBE, CANCEL, END, QUIT, STOPALL, OPTOUT, REVOKE), said alone, in any
 * case, with punctuation around them. A sentence that merely contains "stop" is not an opt-out.
 */
const KEYWORDS = new Set(['stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit', 'optout', 'opt out', 'opt-out', 'revoke'])

export function isOptOut(text: string): boolean {
  return KEYWORDS.has(
    text
      .trim()
      .toLowerCase()
      .replace(/[.!\s]+$/g, '')
      .replace(/^[\s"'“]+|[\s"'”]+$/g, ''),
  )
}
