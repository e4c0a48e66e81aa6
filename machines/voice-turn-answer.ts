/**
 * The turn chart's wait to be told who answered a call that leaves a voicemail (the session sends
 * `answer.await` as the call starts): the line's verdict (`answer.known`), or none in
 * ANSWERED_BY_WAIT_MS, after which the session speaks as to a person (`answeredUnknown`).
 *
 *   answer:  known ─answer.await→ awaiting ─answer.known / after(answeredByWait)→ known
 */
export const ANSWER_REGION = {
  initial: 'known',
  states: {
    known: { on: { 'answer.await': 'awaiting' } },
    awaiting: {
      after: { answeredByWait: { target: 'known', actions: 'answeredUnknown' } },
      on: { 'answer.known': 'known' },
    },
  },
} as const
