/**
 * The agent's voicemail message (`voice.voicemailMessage`): the words left after the beep when a
 * machine answers an outbound call (with `voice.detectMachines`). It may name the contact with
 * `{{name}}`, `{{firstName}}`, `{{phone}}` and `{{email}}`; any other `{{…}}` is refused when the
 * agent is saved, so a typo is never read out to a customer's voicemail.
 */
import { invalid } from '../../refusals'

export const VOICEMAIL_VARIABLES = ['name', 'firstName', 'phone', 'email'] as const
/** About 45 s of speech at ~15 characters a second: mailboxes commonly cut a message at 60 s or more. */
export const VOICEMAIL_MAX_CHARS = 600
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g

/** The stored message: trimmed, its variables known; null turns voicemail drop off. */
export function checkVoicemailMessage(value: string | null): string | null {
  if (value === null) return null
  const text = value.trim()
  const field = 'voice.voicemailMessage'
  if (!text) throw invalid(field, 'must not be blank; send null to leave no voicemail')
  if (text.length > VOICEMAIL_MAX_CHARS) throw invalid(field, `must be at most ${VOICEMAIL_MAX_CHARS} characters (about 45 s of speech)`)
  for (const m of text.matchAll(VARIABLE)) {
    if (!(VOICEMAIL_VARIABLES as readonly string[]).includes(m[1]!)) throw invalid(field, `{{${m[1]}}} is not a variable; use ${VOICEMAIL_VARIABLES.map((v) => `{{${v}}}`).join(', ')}`)
  }
  const stray = text.replace(VARIABLE, '')
  if (stray.includes('{{') || stray.includes('}}')) throw invalid(field, 'has an unclosed {{ or a stray }}')
  return text
}

/** The message for one contact: a variable the contact has no value for is left out, and the words close up around it. */
export function voicemailFor(message: string, contact: { name: string | null; phone: string; email: string | null } | null, phone: string): string {
  const name = contact?.name?.trim() || ''
  const values: Record<string, string> = { name, firstName: name.split(/\s+/)[0] ?? '', phone: contact?.phone ?? phone, email: contact?.email ?? '' }
  return message
    .replace(VARIABLE, (_, v: string) => values[v] ?? '')
    .replace(/[ \t]+([,.!?;:])/g, '$1')
    .replace(/([,;:])(?=[,.!?;:])/g, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim()
}
