/**
 * What the phone network tells the calls: each report (answered, ended, a transfer's leg…) becomes
 * the call chart's event, and a call coming in is answered when this instance has room for it.
 */

import type { Coordination } from '../../../coordination/port'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import type { TelephonyEvent } from '../../../providers/telephony/port'
import type { CallActors, CallEffectPort } from '../control/actor'
import { reportAnsweredBy } from '../live/answered-by'
import { type Admission, isRefusal } from '../placing/admission'
import type { RefusalCounts } from '../placing/refusal-counts'
import type { CallTryRepo } from '../records/repository'
import type { CallService } from '../service'
import type { Lines } from './lines'

/** A network report as the chart's event. */
export function chartEvent(e: Exclude<TelephonyEvent, { type: 'answeredBy' }>) {
  if (e.type === 'answered') return { type: 'call.answered' as const, at: e.at }
  if (e.type === 'unanswered') return { type: 'call.unanswered' as const, at: e.at, hangup: e.hangup }
  if (e.type === 'transfer_answered') return { type: 'transfer.answered' as const, at: e.at, ...(e.legRef ? { legRef: e.legRef } : {}) }
  if (e.type === 'transfer_accepted') return { type: 'transfer.accepted' as const, at: e.at, ...(e.legRef ? { legRef: e.legRef } : {}) }
  if (e.type === 'transfer_ended')
    return { type: 'transfer.ended' as const, at: e.at, outcome: e.outcome, ...(e.seconds !== undefined ? { seconds: e.seconds } : {}), ...(e.error ? { error: e.error } : {}) }
  return { type: 'call.ended' as const, at: e.at, hangup: e.hangup, ...(e.error ? { error: e.error } : {}) }
}

export interface Incoming {
  from: string
  to: string
  callRef: string
  at: number
}
export type AnswerIncoming = (incoming: Incoming) => ReturnType<CallService['answerIncoming']>

/** Hears both networks' reports and the sandbox's incoming calls; answers the incoming-call handler (Twilio's and Telnyx's callbacks take it too). */
export function hearNetwork(d: {
  lines: Pick<Lines, 'sandbox' | 'twilio' | 'telnyx'>
  admission: Admission
  refusals: Pick<RefusalCounts, 'refusedAt'>
  actors: CallActors
  tries: CallTryRepo
  coordination: Coordination
  calls: CallService
  effects: Pick<CallEffectPort, 'openConversation'>
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  logger: Logger
}): AnswerIncoming {
  const { admission, actors, logger } = d
  const applyReport = async (e: TelephonyEvent) => {
    // A try that ended without media (unanswered, refused, hung up ringing) no longer takes room.
    if (e.type !== 'answered') admission.ended(e.callId)
    try {
      // Who answered goes to the call's voice session, not its chart: the call is connected either way.
      if (e.type === 'answeredBy') return await reportAnsweredBy({ tries: d.tries, coordination: d.coordination }, e)
      await actors.send(e.callId, chartEvent(e))
      await actors.settle(e.callId)
    } catch (err) {
      logger.warn({ err, call: e.callId, report: e.type }, 'a phone network report could not be applied')
    }
  }
  d.lines.sandbox.onEvent(applyReport)
  d.lines.twilio?.onEvent(applyReport)
  d.lines.telnyx?.onEvent(applyReport)
  const answer: AnswerIncoming = async (incoming) => {
    // No room here: the caller hears busy (Twilio's <Reject reason="busy"/>, the sandbox's unanswered ring).
    const ticket = admission.admit('inbound')
    if (isRefusal(ticket)) {
      // Its workspace is known only through the number, a store read the refusal does not wait for.
      d.refusals.refusedAt(incoming.to)
      logger.warn({ from: incoming.from, to: incoming.to, reason: ticket.reason }, `an inbound call was refused busy: ${ticket.message}`)
      return null
    }
    const answered = await d.calls.answerIncoming(incoming, d.workspace).catch((err: unknown) => {
      ticket.release()
      throw err
    })
    if (!answered) {
      ticket.release()
      return null
    }
    ticket.bind(answered.callId)
    await d.effects.openConversation({ id: answered.callId, attempt: 1 })
    return answered
  }
  d.lines.sandbox.onIncoming(answer)
  return answer
}
