/**
 * What a warm transfer's person hears before taking the call (docs/api/calls.md "Transfer"): who
 * is waiting and why, in a few seconds of speech. Who: the caller's contact name when we know it,
 * else their number. Why: the caller's own last words to the agent, which asked for the person.
 * And what the agent tells the caller when the person could not be connected.
 */
import type { TranscriptLine } from './analysis-types'

/**
 * The caller's words in the brief: ~40 words is ~15 s of speech at a phone pace of 150 words a
 * minute, as long as a person will listen before deciding.
 */
export const BRIEF_WORDS_MAX = 40

export function warmBrief(input: { agentName: string; destination: string; caller: { name: string | null; phone: string | null }; transcript: TranscriptLine[] }): string {
  const who = input.caller.name?.trim() || (input.caller.phone ? `a caller from ${spokenNumber(input.caller.phone)}` : 'a caller')
  const said = callerWords(input.transcript)
  const why = said ? ` They said: "${said}"` : ''
  return `Hello, this is ${input.agentName}. I have ${who} on the line for ${input.destination}.${why}`
}

/** The caller's last lines, newest last, cut to BRIEF_WORDS_MAX words from the end. */
export function callerWords(transcript: TranscriptLine[]): string {
  const lines: string[] = []
  for (let i = transcript.length - 1; i >= 0 && lines.length < 3; i--) {
    const line = transcript[i]!
    if (line.speaker === 'customer' && line.text.trim()) lines.unshift(line.text.trim())
  }
  const words = lines.join(' ').split(/\s+/).filter(Boolean)
  return (words.length > BRIEF_WORDS_MAX ? ['…', ...words.slice(-BRIEF_WORDS_MAX)] : words).join(' ')
}

/** A number read digit by digit ("+1 415 555 0777" → "1 4 1 5 …"), so a text-to-speech voice does not say it as an amount. */
function spokenNumber(phone: string): string {
  return phone.replace(/\D/g, '').split('').join(' ')
}

/** What the agent tells the caller, back from a warm transfer that did not connect (`outcome` not answered). */
export function warmMissed(name: string, outcome: string): string {
  const what: Record<string, string> = {
    no_answer: `${name} didn't pick up`,
    busy: `${name} is on another call`,
    declined: `${name} can't take the call right now`,
    failed: `I couldn't reach ${name}`,
  }
  return `I'm sorry, ${what[outcome] ?? what.failed}. I'm still here with you: is there anything else I can help you with?`
}
