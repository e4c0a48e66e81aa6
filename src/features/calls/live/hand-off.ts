/**
 * Before the network takes a call's media stream away (a cold transfer, a warm one's join), the
 * agent finishes the sentence the caller is hearing: the call's effect asks the voice session, on
 * whichever instance holds the stream, on `hand-off:{callId}`, and the session answers on
 * `hand-off-ready:{callId}` once that sentence has played (VoiceSession.handingOff). A hand-off
 * the network refused is called off on the same channel, and the agent answers again.
 */
import type { Coordination } from '../../../coordination/port'
import { HAND_OFF_SENTENCE_MS } from '../../../voice/public'
import type { CallTryDoc } from '../records/repository'

const handOffChannel = (callId: string) => `hand-off:${callId}`
const readyChannel = (callId: string) => `hand-off-ready:${callId}`

/** The session's own bound on the sentence, and a second for the round trip on the coordination store's channels. */
export const SENTENCE_WAIT_MS = HAND_OFF_SENTENCE_MS + 1_000

type Ask = 'finish' | 'resume'

/** Resolves once the call's session has finished its sentence (at most SENTENCE_WAIT_MS); at once when no stream is live. */
export async function sentenceHeard(coordination: Coordination, row: CallTryDoc): Promise<void> {
  if (row.media !== 'live') return
  let timer: ReturnType<typeof setTimeout> | undefined
  let ready = () => {}
  const answered = new Promise<void>((resolve) => {
    ready = resolve
    timer = setTimeout(resolve, SENTENCE_WAIT_MS)
  })
  const unsubscribe = await coordination.subscribe(readyChannel(row.callId), () => ready())
  try {
    await coordination.publish(handOffChannel(row.callId), 'finish' satisfies Ask)
    await answered
  } finally {
    clearTimeout(timer)
    await unsubscribe()
  }
}

/** The network did not take the call: its session answers again. */
export function handOffCalledOff(coordination: Coordination, callId: string): Promise<void> {
  return coordination.publish(handOffChannel(callId), 'resume' satisfies Ask).catch(() => {})
}

/** The session's side: finishes its sentence when asked and says so; unsubscribes when the returned function is called. */
export function answerHandOffs(coordination: Coordination, callId: string, session: { handingOff(): Promise<void>; handOffFailed(): void }): Promise<() => Promise<void>> {
  return coordination.subscribe(handOffChannel(callId), (ask) => {
    if (ask === 'resume') return session.handOffFailed()
    if (ask !== 'finish') return
    void session.handingOff().then(() => coordination.publish(readyChannel(callId), '').catch(() => {}))
  })
}
