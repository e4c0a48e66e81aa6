// Shared by the calls tests (not a test file itself).
import type { CallTryDoc } from '../../../src/features/calls/records/repository'

/** A whole try row: a ringing outbound phone call with nothing heard yet, changed by `fields`. */
export function tryRow(fields: Pick<CallTryDoc, 'id'> & Partial<CallTryDoc>): CallTryDoc {
  const callId = fields.callId ?? fields.id.split(':')[0]!
  return {
    callId,
    attempt: 1,
    workspaceId: 'ws_a',
    developerId: 'ws_a',
    agentId: 'ag_1',
    agentName: 'Agent',
    direction: 'outbound',
    surface: 'phone',
    listed: true,
    status: 'ringing',
    phone: '+14155550100',
    from: null,
    callRef: null,
    reference: null,
    metadata: null,
    variables: {},
    purpose: null,
    extract: null,
    voice: null,
    conversationId: null,
    scheduledFor: null,
    startedAt: null,
    answeredAt: null,
    endedAt: null,
    seconds: 0,
    hangup: null,
    summary: null,
    fields: {},
    transcript: [],
    recording: null,
    analysedAt: null,
    retryScheduledFor: null,
    error: null,
    debitMicro: 0,
    tally: null,
    createdAt: '2026-03-01T10:00:00.000Z',
    ...fields,
  }
}
