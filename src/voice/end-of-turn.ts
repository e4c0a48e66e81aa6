/**
 * Adaptive end of turn: how long the caller's silence must last before the agent answers, read
 * from what the caller has said so far (the speech-to-text engine's partial transcript). A plainly
 * complete turn — a question, a finished sentence, a yes or a thank-you — is answered after a
 * short pause; one that trails off ("and…", "um", half a phone number) waits much longer, so the
 * caller is not cut off mid-thought. What the caller's voice says (turn-cues/: the pitch at the
 * end of the last voiced stretch, this caller's pauses so far) is the second input. Rules, not a
 * model: each is a line of the table below and has a test (test/voice/end-of-turn.test.ts,
 * end-of-turn-cues.test.ts); `bench:turn-taking` measures them on the phone line against a corpus
 * of spoken cases in two voice families, `bench:turn-rules` offline, `bench:turns` the words' rules
 * on a written one.
 *
 * The rule table (first match wins; the words' rules first, the voice's where the words say
 * nothing — no words yet, as with pocketsphinx whose words are mostly wrong, or a neutral statement).
 * Each wait is its engine profile's (turn-waits.ts, read off `bench:turn-rules`' curves): local
 * (no words at a pause) / hosted (a vendor's final words at each pause).
 *
 *   | rule                                                           | shape    | wait local / hosted      |
 *   |----------------------------------------------------------------|----------|--------------------------|
 *   | words end on a comma, a dash or an ellipsis                    | trailing | upper (1,500)            |
 *   | half a number or code being read out (< 10 digits or letters)  | trailing | upper                    |
 *   |   … with a full stop after it (²)                               | number   | 800                      |
 *   | a short answer, confirmation or thanks                         | complete | 300                      |
 *   | the last word is a connective, article, preposition or filler  | trailing | upper                    |
 *   |   … with a full stop: only a word no sentence ends on (²)       | trailing | upper                    |
 *   | a month without its day, with no full stop (²)                 | trailing | upper                    |
 *   | ends on a question mark                                        | complete | 300                      |
 *   | a statement closed by a full stop (a sentence may follow)      | complete | 800                      |
 *   | a whole number (10+ digits) / ends on a number                 | number   | 800                      |
 *   | a question at its auxiliary and subject ("where do customers") | trailing | upper                    |
 *   | a question that asks to be told ("could you tell me")          | trailing | upper                    |
 *   | a question stopping at its subject or "the …ing" (¹)           | neutral  | 800                      |
 *   | a question with its object, no question mark                   | complete | 700                      |
 *   | voice: pitch falls ≥ 1.5 semitones over the last syllable (¹)  | complete | 850 / 800                |
 *   | voice: pitch level or rising at the end (¹)                    | holding  | 1,000 / 800, or this     |
 *   |   (dynamic endpointing once the caller has paused in a turn)   |          | caller's longest pause + |
 *   |                                                                |          | 250, within 880 / 800 …  |
 *   |                                                                |          | upper                    |
 *   | a statement with no sign either way (¹)                        | neutral  | 800                      |
 *   | nothing heard yet (¹)                                          | unknown  | 880 / 800                |
 *
 *   (¹) the voice's two rows decide these when its pitch can be read (voiced, 80+ ms of it).
 *   (²) a full stop (or ? or !) the engine put after the words: the sentence is closed, so a word
 *       that can end one ("I don't think so.", "What is it for?") and a date or code read out
 *       whole ("the third of March.", "S W one A one A A.") do not trail.
 *
 * Anchors for the numbers: LiveKit answers 0.5 s after its end-of-turn model says "done" and
 * waits 3.0 s when it says "not done"; Pipecat's VAD stops at 0.2 s of silence; Vapi waits 0.1 s
 * after punctuation, 0.4 s after a number and 1.5 s with no punctuation. Pauses between two
 * speakers' turns run ~200 ms in conversation, pauses inside one speaker's turn 500–700 ms.
 */

import { holdingWait, MIN_PAUSES } from './turn-cues/pauses'
import type { TurnCues } from './turn-cues/voice-cues'
import { HOSTED_WAITS, type TurnWaits } from './turn-waits'

/**
 * A turn that trails off: Vapi's 1.5 s with no punctuation (LiveKit waits 3.0 s). The agent's
 * `voice.endpointingMs` replaces it (200–3,000 ms) and caps every other wait.
 */
export const TRAILING_WAIT_MS = 1_500

/** `pending`: the engine's final words are still to come (awaitingFinal); `vendor`: the engine ends the turn itself (vendor-turns.ts). */
export type TurnShape = 'complete' | 'number' | 'neutral' | 'trailing' | 'unknown' | 'holding' | 'pending' | 'vendor'

export interface EndOfTurn {
  /** Silence after the caller's last speech before the turn ends. */
  waitMs: number
  shape: TurnShape
  /** The rule that decided, in words (the inspector and the call's log show it). */
  why: string
}

/** Words a sentence does not end on: conjunctions, prepositions, articles, fillers, a verb left open. */
const TRAILING_WORDS = new Set(
  (
    'and or but so because cause since though although unless until while whereas if then than that which who whose whom where when ' +
    'the a an my your our their his her its this these those some any each every ' +
    'to of for with at on in into onto from by about like as per via ' +
    'um uh er erm hmm ah mm well basically actually also plus thank ' +
    'is are was were am be been being do does did have has had can could will would shall should may might must ' +
    "i'm i'd i'll i've it's that's there's he's she's we're they're you're i we"
  ).split(' '),
)
/**
 * Of those, the words no sentence ends on even when the engine closed it with a full stop: an
 * article or possessive (its noun is due), a conjunction that joins, a filler, a subject with no
 * verb. The rest can end one ("I think so.", "What is it for?", "I'd love to.", "See you then.").
 */
const NEVER_FINAL = new Set(
  (
    'and or but because cause although unless whereas if than the a an my your our their his her its every um uh er erm plus per via thank ' +
    "i'm i'd i'll i've it's that's there's he's she's we're they're you're i we"
  ).split(' '),
)
/** Words that end a short turn on their own: answers, confirmations, thanks, goodbyes. */
const SHORT_COMPLETE = new Set(('yes yeah yep yup no nope nah sure okay ok right correct exactly absolutely definitely fine great perfect ' + 'thanks bye goodbye done please hello hi hey').split(' '))
const SHORT_COMPLETE_PHRASES = new Set([
  "that's right",
  "that's it",
  "that's all",
  'thank you',
  'thank you very much',
  'thanks a lot',
  'not really',
  'of course',
  'sounds good',
  "that's fine",
  'all right',
  'go ahead',
  'i do',
  "i don't",
  'i am',
  "i'm not",
  'i will',
  "i won't",
  'i can',
  "i can't",
  'i have',
  "i haven't",
  'i did',
  "i didn't",
  'why not',
  'not at all',
  'see you',
  "i don't think so",
  'i think so',
  'i hope so',
  'i guess so',
  'i believe so',
  "i don't know",
  "i'm not sure",
  'no problem',
])

/** A short answer: "yes", "no thanks", "yes I do", "thank you very much" (at most four words). */
function shortAnswer(ws: string[]): boolean {
  if (ws.length > 4) return false
  const phrase = ws.join(' ')
  if (SHORT_COMPLETE_PHRASES.has(phrase) || ws.every((w) => SHORT_COMPLETE.has(w))) return true
  const rest = ws.slice(1)
  return SHORT_COMPLETE.has(ws[0]!) && (SHORT_COMPLETE_PHRASES.has(rest.join(' ')) || rest.every((w) => SHORT_COMPLETE.has(w)))
}
/** "the" and possessives: a particular thing is being named, its noun due after them ("any parking" is whole). */
const DETERMINERS = new Set('the my your our their his her its'.split(' '))

/** Words that open a question: a turn that starts with one and has its object is complete. */
const QUESTION_OPENERS = new Set('what when where who whom whose why how which can could do does did is are was were will would should shall may might have has am'.split(' '))
/** A question ending on one of these has its subject but not its verb yet… */
const SUBJECTS = new Set(['you', 'they', 'he', 'she'])
/** Auxiliaries that leave a question's main verb to come ("do you", "can they"); a copula ("are you") may not. */
const AUXILIARIES = new Set('do does did can could will would shall should may might must'.split(' '))
/** Question words an auxiliary follows ("where do …", "what time does …"); not "who", often the subject itself ("who did it"). */
const WH_WORDS = new Set('what when where why how which'.split(' '))
/** A question ending on these asks to be told something, and the something is still to come. */
const CLAUSE_DUE = /\b(?:(?:tell|show|remind|ask) (?:me|us)|let (?:me|us) know)$/
/** Words that open a noun phrase: the subject may be one of these and its noun. */
const NP_OPENERS = new Set('the a an my your our their his her its this that these those some any'.split(' '))

/**
 * "Where do customers", "what time does the shop", "can the driver": a question's auxiliary has
 * its subject (one word, or a determiner and its noun) and nothing after it: the main verb is
 * still to come. The auxiliary and its subject, or null.
 */
function verbDue(ws: string[]): string | null {
  const aux = WH_WORDS.has(ws[0]!) ? [1, 2].find((i) => AUXILIARIES.has(ws[i] ?? '')) : AUXILIARIES.has(ws[0]!) ? 0 : undefined
  if (aux === undefined) return null
  const subject = ws.slice(aux + 1)
  return subject.length === 1 || (subject.length === 2 && NP_OPENERS.has(subject[0]!)) ? [ws[aux], ...subject].join(' ') : null
}
/** …except these, which are whole. */
const WHOLE_QUESTIONS = new Set(['how are you', 'who are you', 'where are you', 'what about you', 'how about you', 'how are they', 'where are they', 'who is she', 'who is he'])
const NUMBER_WORDS = new Set('zero oh one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty ninety hundred thousand'.split(' '))
const MONTHS = new Set('january february march april may june july august september october november december'.split(' '))
/** Digits a phone number needs before it reads as whole (E.164 numbers with a country code: 10–15). */
const PHONE_DIGITS = 10

const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9'\s-]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)

/**
 * Digits read out at the end of the text (as numerals or words), counted, and single letters
 * among them when there are at least two things read out ("S W one A", "K L seven nine", "a l e
 * x"): a code spelled out, whose last "a" is a letter, not an article.
 */
function trailingCode(ws: string[]): number {
  let n = 0
  let letters = 0
  let items = 0
  for (let i = ws.length - 1; i >= 0; i--) {
    const w = ws[i]!
    if (/^\d+$/.test(w)) n += w.length
    else if (NUMBER_WORDS.has(w)) n += 1
    else if (/^[a-z]$/.test(w)) letters += 1
    else if (w !== '-' && w !== 'dash') break
    items++
  }
  return items >= 2 || letters === 0 ? n + letters : n
}

/**
 * No verdict while the engine's final words for the caller's speech are still to come: its
 * interim words may be short of what was said ("Do you still" with "have the" to come), so the
 * turn waits as if trailing, and the final, when it comes, is judged (the wait still counted from
 * the caller's last speech: a final in time costs nothing).
 */
export function awaitingFinal(upperMs: number = TRAILING_WAIT_MS): EndOfTurn {
  return { waitMs: upperMs, shape: 'pending', why: "the engine's final words are still to come" }
}

/**
 * How long to wait for more from the caller, given what they said so far and, when the session
 * has it, what their voice says (`cues`: the pitch at the end of their last voiced stretch, their
 * pauses so far). `upperMs` (the agent's `voice.endpointingMs`, or TRAILING_WAIT_MS) is the wait
 * for a turn that trails off and caps the others. The words decide when they say something; the
 * voice decides where they do not (no words yet, as with pocketsphinx, or a neutral statement).
 */
export function endOfTurn(text: string, upperMs: number = TRAILING_WAIT_MS, cues?: TurnCues, waits: TurnWaits = HOSTED_WAITS): EndOfTurn {
  const words = fromWords(text, upperMs, waits)
  if (!cues || (words.shape !== 'unknown' && words.shape !== 'neutral')) return words
  const st = cues.semitones === null ? '' : ` (${cues.semitones > 0 ? '+' : ''}${cues.semitones.toFixed(1)} semitones)`
  if (cues.pitch === 'falling') return { waitMs: Math.min(waits.falling, upperMs), shape: 'complete', why: `the voice falls at the end${st}` }
  if (cues.pitch === 'level' || cues.pitch === 'rising') {
    const waitMs = holdingWait(cues.pausesMs, waits.holding, waits.holdingFloor, upperMs)
    const own = cues.pausesMs.length >= MIN_PAUSES ? `; this caller pauses up to ${Math.max(...cues.pausesMs)} ms` : ''
    return { waitMs, shape: 'holding', why: `the voice stays up at the end (${cues.pitch}${st})${own}` }
  }
  return words
}

/** The rules on the words alone. */
function fromWords(text: string, upperMs: number, waits: TurnWaits): EndOfTurn {
  const at = (waitMs: number, shape: TurnShape, why: string): EndOfTurn => ({ waitMs: Math.min(waitMs, upperMs), shape, why })
  const trimmed = text.trim()
  if (!trimmed) return at(waits.unknown, 'unknown', 'nothing heard yet')
  const ws = words(trimmed)
  if (!ws.length) return at(waits.unknown, 'unknown', 'no words')
  const last = ws[ws.length - 1]!
  // Punctuation an engine put there (Deepgram's smart_format) is the strongest signal: ellipses and
  // commas trail, a question mark or a full stop ends.
  if (/(\.\.\.|…|,|-)\s*$/.test(trimmed)) return at(upperMs, 'trailing', 'ends on a comma, a dash or an ellipsis')
  // The engine closed the sentence (smart_format's punctuation, or a script's).
  const closed = /[?.!]\s*$/.test(trimmed)
  const digits = trailingCode(ws)
  if (digits > 0 && digits < PHONE_DIGITS && (ws.length === digits || ws.slice(0, ws.length - 1).some((w) => w === 'number' || w === 'is' || w === 'code' || w === 'card'))) {
    if (closed) return at(waits.number, 'number', `a number or code read out, with a full stop after it (${digits} characters)`)
    return at(upperMs, 'trailing', `a number or code being read out (${digits} characters so far)`)
  }
  if (shortAnswer(ws)) return at(waits.complete, 'complete', 'an answer, a confirmation or thanks')
  if (closed ? NEVER_FINAL.has(last) : TRAILING_WORDS.has(last)) return at(upperMs, 'trailing', `ends on "${last}"`)
  if (MONTHS.has(last) && ws.length > 1 && !closed) return at(upperMs, 'trailing', 'a date without its day')
  // A question asks for its answer now; a statement closed by a full stop may have a second sentence after it ("My parcel never arrived. And nobody called.").
  if (closed) return /[?!]\s*$/.test(trimmed) ? at(waits.complete, 'complete', 'ends on a question mark') : at(waits.statement, 'complete', 'a statement closed by a full stop')
  if (digits >= PHONE_DIGITS) return at(waits.number, 'number', `a whole number (${digits} digits)`)
  if (digits > 0) return at(waits.number, 'number', 'ends on a number')
  if (QUESTION_OPENERS.has(ws[0]!) && ws.length >= 3) {
    // "What time do you", "where do customers": an auxiliary and its subject, the verb still to
    // come; no question ends there, so the voice (a pitch that dips on the subject) cannot shorten the wait.
    const due = verbDue(ws)
    if (due) return at(upperMs, 'trailing', `a question with its subject, not its verb ("${due}")`)
    // "Could you tell me", "can you let me know": what is to be told comes next.
    const asks = CLAUSE_DUE.exec(ws.join(' '))
    if (asks) return at(upperMs, 'trailing', `a question that asks to be told, not yet what ("${asks[0]}")`)
    // "When are you": mostly its verb or adjective is to come ("open"), though a few are whole.
    if (SUBJECTS.has(last) && !WHOLE_QUESTIONS.has(ws.slice(-3).join(' '))) return at(waits.neutral, 'neutral', `a question that stops at its subject ("${last}")`)
    // "What are your opening", "is the booking": an -ing word after a determiner is mostly the
    // first half of a noun ("opening hours", "booking fee"); the question has no object yet.
    if (/ing$/.test(last) && DETERMINERS.has(ws[ws.length - 2]!)) return at(waits.neutral, 'neutral', `a question that stops at "${ws[ws.length - 2]} ${last}"`)
    return at(waits.question, 'complete', `a question with no question mark ("${ws[0]} …")`)
  }
  return at(waits.neutral, 'neutral', 'a statement with no sign either way')
}
