/**
 * Who answered a call that leaves a voicemail (the network's answering-machine verdict, telephony
 * port `answeredBy`) reaches the call's voice session, wherever its media stream runs: the verdict
 * is kept on the try's row (`answeredBy`, for a stream that starts after it came) and published on
 * the call's channel (for a stream already running, on any instance).
 */
import type { Coordination } from '../../../coordination/port'
import type { AnsweredBy } from '../../../providers/telephony/port'
import type { Collection } from '../../../store/port'
import type { CallTryDoc } from '../records/repository'

export const answeredByChannel = (callId: string) => `answered-by:${callId}`

const VERDICTS: readonly AnsweredBy[] = ['human', 'machine', 'fax', 'unknown']
export const isAnsweredBy = (v: unknown): v is AnsweredBy => VERDICTS.includes(v as AnsweredBy)

export async function reportAnsweredBy(d: { tries: Collection<CallTryDoc>; coordination: Coordination }, e: { callId: string; attempt: number; by: AnsweredBy }): Promise<void> {
  // A verdict for a try that is no longer the live one (a retry rang meanwhile) changes nothing.
  const row = await d.tries.get(`${e.callId}:${e.attempt}`)
  if (row?.status !== 'connected') return
  await d.tries.update(row.id, { answeredBy: e.by })
  await d.coordination.publish(answeredByChannel(e.callId), e.by)
}
