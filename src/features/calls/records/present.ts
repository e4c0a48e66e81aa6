/** A call row in its public forms (docs/spec.md Call; the list form omits four members). */

import { summariseLatency } from '../../../voice/public'
import type { Call } from '../model'
import type { CallTryDoc } from './repository'

export function presentCall(row: CallTryDoc): Call {
  return {
    ...presentListedCall(row),
    from: row.from,
    transcript: row.transcript,
    recording: row.recording,
    retryScheduledFor: row.retryScheduledFor,
    latency: row.media ? { ...summariseLatency(row.latencyTurns ?? []), overlaps: { ...(row.overlaps ?? { resumed: 0, taken: 0, talkedOver: 0 }), talkedInto: row.talkedInto ?? 0 } } : null,
  }
}

export function presentListedCall(row: CallTryDoc): Omit<Call, 'from' | 'transcript' | 'recording' | 'retryScheduledFor' | 'latency'> {
  return {
    id: row.callId,
    callRef: row.callRef,
    reference: row.reference,
    metadata: row.metadata,
    attempt: row.attempt,
    status: row.status === 'created' ? 'ringing' : row.status,
    direction: row.direction,
    phone: row.phone,
    agent: { id: row.agentId, name: row.agentName },
    scheduledFor: row.scheduledFor,
    startedAt: row.startedAt,
    answeredAt: row.answeredAt,
    endedAt: row.endedAt,
    seconds: row.seconds,
    hangup: row.hangup,
    variables: row.variables,
    summary: row.summary,
    fields: row.fields,
    analysedAt: row.analysedAt,
    error: row.error,
    transfer: row.transfer ?? null,
  }
}
