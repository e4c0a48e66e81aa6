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
 * turn: said over the agent, the agent keeps talking ("uh-huh", "okay"). Not "no", "wait",
 * "stop" or "hold on": those are the caller taking the turn.
 */
const BACKCHANNELS = new Set([
  'uh huh',
  'mm hmm',
  'mm hm',
  'mhm',
  'mhmm',
  'mmhmm',
  'mm',
  'hmm',
  'okay',
  'ok',
  'yeah',
  'yes',
  'yep',
  'right',
  'sure',
  'i see',
  'got it',
  'alright',
  'all right',
  'ah',
  'oh',
])
/**
 * The longest run of them still heard as one acknowledgement ("okay, yeah", "mm-hmm, right"):
 * they come in ones to threes ("yeah, yeah, yeah"); one more is margin, and past it the caller is
 * saying something.
 */
const MAX_BACKCHANNEL_RUN = 4

/** Whether `text` is made only of acknowledgements, however written: "Mm-hmm.", "Okay, yeah.", "yeah, yeah". */
export function isBackchannel(text: string): boolean {
  const ws = text
    .toLowerCase()
    .replace(/[^a-z\s]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
  // Each acknowledgement is one word or two ("i see"), read from the front.
  let runs = 0
  for (let i = 0; i < ws.length; runs++) {
    if (BACKCHANNELS.has(`${ws[i]} ${ws[i + 1]}`)) i += 2
    else if (BACKCHANNELS.has(ws[i]!)) i += 1
    else return false
  }
  return runs > 0 && runs <= MAX_BACKCHANNEL_RUN
}
