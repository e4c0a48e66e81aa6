/**
 * How long the caller's silence must last before the agent answers, per engine profile: the
 * numbers the end-of-turn rules (end-of-turn.ts) hand out, by what the words and the voice say.
 * Two profiles, by what the speech-to-text engine gives at a pause:
 *  - `local`: no words to judge (pocketsphinx, whose words are mostly wrong; an engine with no
 *    partial results): the voice alone decides, its pitch and this caller's own pauses;
 *  - `hosted`: a vendor's final words at every pause (Deepgram after a Finalize): the words decide,
 *    the voice where they say nothing either way.
 * Each number is read off its profile's trade-off curve (false cut-offs against the complete-turn
 * wait), printed by `npm run bench:turn-rules` and kept in docs/benchmarks.md ("Patience from the
 * curve"). An agent's `voice.endpointingMs` is the wait for a turn that trails off and caps these.
 */

/** The waits of one profile (ms of silence after the caller's last speech). */
export interface TurnWaits {
  /** The words are plainly complete: a question mark, a question with its object, a short answer. */
  complete: number
  /** A statement closed by a full stop: complete, though a caller may add a sentence after it. */
  statement: number
  /** A question read from its words alone, no question mark: "Can I come on Tuesday" may go on ("… at about ten"). */
  question: number
  /** A whole phone number, or a number that ends a clause. */
  number: number
  /** Words with no sign either way, the voice unreadable. */
  neutral: number
  /** No words at the pause, the voice unreadable (too little voicing). */
  unknown: number
  /** The words say nothing either way and the voice falls at the end. */
  falling: number
  /** The words say nothing either way and the voice stays up, until the caller has paused inside a turn. */
  holding: number
  /** The least a holding wait comes down to once the caller's own pauses decide it (pauses.ts). */
  holdingFloor: number
}

export type TurnProfile = 'local' | 'hosted'

/**
 * A vendor's final words at every pause. From the hosted curve (`npm run bench:turn-rules`,
 * 2026-12-07), punctuated and bare words judged with the same waits: a question mark or a short
 * answer waits 300 ms (200 cuts bare short answers before their short pause, "Yes |300| that is
 * right": bare 3.8% against 1.9%); a question with no question mark (bare words) 700 ms, as "Can I
 * come on Tuesday |600| at about ten" goes on (300 → bare 4.8%, 600 → 2.9%, 700 → 1.9%); words
 * with no sign either way 800 ms whatever the voice (500 → bare 24.5%, 700 → 4.3%; a falling voice
 * buys nothing: falling 200 → 24.0%). A statement's full stop and a number wait 800 ms: offline 700
 * is enough (statement 200 → 5.8% punctuated, 600 → 1.9%, 700 → 0; number 400 → bare 8.7%, 700 →
 * 1.9%), but the line hears a pause 100 ms or more longer than the script's (the VAD ends speech
 * before its last quiet sound and starts it after the next one's onset), and there a 600 ms pause
 * after "We moved house." and a 700 ms one after "at fifty" were cut at 700
 * (`BENCH_PROFILES=hosted npm run bench:turn-taking`).
 */
export const HOSTED_WAITS: TurnWaits = {
  complete: 300,
  statement: 800,
  question: 700,
  number: 800,
  neutral: 800,
  unknown: 800,
  falling: 800,
  holding: 800,
  holdingFloor: 800,
}

/**
 * No words at a pause: the voice decides. From the local curve (same command and date; 208 turns
 * with pauses inside, in two voice families): one wait for every pause cuts 12.5% at 700 ms, 5.8%
 * at 800, 1.9% at 900, 0 at 1,000. A falling voice ends most complete turns, and waiting 850 ms
 * there keeps the rate of a flat 900 ms (1.9%) with the complete-turn wait p50 850 instead of 900
 * (below 800 it climbs: 700 → 4.3%, 200 → 44.7%). A voice held up waits 1,000 ms (900 → 2.9%).
 * The caller's own pauses may only bring that down to 880 ms, and an unreadable voice waits as
 * long: at 800 the floor lets a caller's short first pause cut their longer next one (3.4%), at
 * 880 neither costs a cut-off, and the line's complete turns (on the line more of them read as
 * held up or unreadable than offline: `BENCH_PROFILES=local npm run bench:turn-taking` gave p50
 * 903 ms with 900 here) answer within 900 ms at the median.
 */
export const LOCAL_WAITS: TurnWaits = {
  // The words' waits are not reached on this profile (no words at a pause); the hosted ones if they are.
  ...HOSTED_WAITS,
  unknown: 880,
  falling: 850,
  holding: 1_000,
  holdingFloor: 880,
}

/** Each profile's default waits (an agent's patience `normal`). */
export const TURN_WAITS: Readonly<Record<TurnProfile, TurnWaits>> = { local: LOCAL_WAITS, hosted: HOSTED_WAITS }
