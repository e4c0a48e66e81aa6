/**
 * The turn chart's moves for a speech-to-text engine that judges the end of the caller's turn
 * itself (its capabilities say `endOfTurn`: Deepgram Flux, AssemblyAI v3). Its events stand in for
 * the end-of-turn rules, whose wait is then only a backstop for an engine gone quiet (the session
 * judges such a pause `vendor`, VENDOR_TURN_BACKSTOP_MS):
 *
 *   callerSpeaking | maybeDone ─turn.eager→ (the answer starts on the words, held: nothing is heard or written)
 *   callerSpeaking | maybeDone ─turn.resumed→ (the held answer is withdrawn, with no trace)
 *   callerSpeaking | maybeDone | interrupted ─turn.end→ thinking (the end's words are the turn's final
 *     words: the held answer is released when it answers them, else the answer starts now)
 *
 * Barge-in stays the VAD's (a StartOfTurn comes later than Silero's onset), and so does everything
 * after the turn's end: the answer, a caller going on before hearing it, a false interruption.
 */
import { voiceTurnSetup } from './voice-turn-setup'

/** The engine's eager end: the answer is prepared on its words and held until the end. */
const eager = voiceTurnSetup.enqueueActions(({ event, enqueue }) => {
  if (event.type !== 'turn.eager') return
  enqueue.assign({ text: event.text, shape: 'complete', why: "the engine's eager end of turn: the answer is prepared, held" })
  enqueue({ type: 'preempt', params: { text: event.text, shape: 'complete' } })
})

/** The caller went on after an eager end: the prepared answer goes. */
const resumed = voiceTurnSetup.enqueueActions(({ event, enqueue }) => {
  if (event.type !== 'turn.resumed') return
  enqueue.assign({ shape: 'vendor', why: 'the caller went on after the eager end: the prepared answer is withdrawn' })
  enqueue('cancelPreempt')
})

/** The engine ended the turn on `text` (`at`: the caller's last speech, when the VAD had not yet called a pause). */
const ended = (fromPause: boolean) =>
  voiceTurnSetup.enqueueActions(({ context, event, enqueue }) => {
    if (event.type !== 'turn.end') return
    enqueue.assign({ text: event.text, why: "the engine's end of turn: the turn is over", ...(fromPause ? {} : { pausedAt: event.at ?? context.pausedAt }) })
    enqueue('commitTurn')
  })

const THINKING = '#voiceTurn.live.turn.thinking'

/** Spread into the states of voice-turn.ts that listen to the caller. */
export const VENDOR_TURN = {
  callerSpeaking: {
    'turn.eager': { actions: eager },
    'turn.resumed': { actions: resumed },
    'turn.end': { target: THINKING, actions: ended(false) },
  },
  maybeDone: {
    'turn.eager': { actions: eager },
    'turn.resumed': { actions: resumed },
    'turn.end': { target: THINKING, actions: ended(true) },
  },
  interrupted: {
    'turn.end': { target: THINKING, actions: ended(false) },
  },
} as const
