/** What the agent says on its own (not from the model), and the caller's backchannels. */
export const VOICE_LINES = {
  trouble: "I'm sorry, I'm having trouble on my end. Please try again later. Goodbye.",
  silence: "I haven't heard anything for a while, so I'll end the call here. Goodbye.",
  timeLimit: "We've reached the time limit for this call. Thank you for your time. Goodbye.",
  /** The caller's words were lost to a speech engine at capacity: the call goes on. */
  repeat: "Sorry, I didn't catch that. Could you say it again?",
  unavailable: 'Sorry, this line is not available right now. Please try again later. Goodbye.',
  /** The service is shutting down and the call outlived the drain (docs/production.md "Draining"). */
  closing: "I'm sorry, I have to end the call here. Please call back if there's anything else. Goodbye.",
} as const

/**
 * Short acknowledgements a listener makes while the other person talks. They never take the
 * turn: said over the agent, the agent keeps talking ("uh-huh", "okay").
 */
const BACKCHANNELS = new Set(['uh huh', 'uh-huh', 'mm hmm', 'mhm', 'mm', 'hmm', 'okay', 'ok', 'yeah', 'yes', 'yep', 'right', 'sure', 'i see', 'got it', 'alright', 'all right', 'ah', 'oh'])

export function isBackchannel(text: string): boolean {
  const t = text
    .toLowerCase()
    .replace(/[^a-z\s-]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return BACKCHANNELS.has(t)
}
