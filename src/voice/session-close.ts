/**
 * A voice session closing (either side ended the call): the chart's waits stop, the heard part of
 * the agent's current turn is final, and the caller's turn, if it was not answered, still reaches
 * the transcript once its words are known. Resolves once what the caller heard is stored (the
 * call's analysis reads it).
 */
import type { Actor } from 'xstate'
import { turnState, type voiceTurnMachine } from '../../machines/voice-turn'
import type { AgentTurns } from './agent-turns'
import type { CallerWords } from './caller-words'
import { isBackchannel } from './phrases'
import type { SttSession } from './ports/stt'

export interface ClosingSession {
  chart: Actor<typeof voiceTurnMachine>
  words: CallerWords
  agent: AgentTurns
  stt: SttSession
  /** The final words a commit waits for: if the call ends meanwhile, they are still the caller's. */
  finalInFlight: Promise<string> | null
  /** The session's own waits stop (who answered a voicemail call, a hand-off's hold), once the chart has ended. */
  stopWaits(): void
}

export async function closeSession(s: ClosingSession): Promise<void> {
  const unanswered = unansweredWords(s)
  s.chart.send({ type: 'call.end' })
  s.stopWaits()
  s.agent.close()
  if (unanswered) s.agent.keepCallerWords(unanswered)
  // The engine closes once it has given the turn's last words (each engine bounds its own final).
  void (unanswered ?? Promise.resolve()).finally(() => s.stt.close().catch(() => {}))
  s.chart.stop()
  await s.agent.stored
}

/**
 * The call ends with the caller's turn not answered (still being said, judged, or its final words
 * on their way): their words, which were said, for the transcript. A backchannel over the agent
 * is not a turn of its own and goes.
 */
function unansweredWords({ chart, words, finalInFlight }: ClosingSession): Promise<string> | null {
  const { value, context } = chart.getSnapshot()
  const { held, interrupted } = context
  const state = turnState(value)
  const open = state === 'callerSpeaking' || state === 'maybeDone' || state === 'interrupted'
  const final = open ? words.final() : state === 'thinking' ? finalInFlight : null
  if (!final) return null
  return final.then(
    (text) => (interrupted && isBackchannel(text) ? '' : [held, text].filter(Boolean).join(' ')),
    () => held,
  )
}
