/**
 * The row a call's first try is stored as when the call is placed or answered: the callers (placing,
 * an inbound or web call) then set what differs for them (direction, status, surface).
 */
import { iso } from '../../../clock'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { AgentDoc } from '../../agents/public'
import type { PlaceCall } from '../model'
import { type CallTryDoc, tryId } from '../records/repository'
import { developerOf } from './lines'

export interface FirstTry {
  id: string
  phone: string
  from: string
  body: PlaceCall
  variables: CallTryDoc['variables']
  extract: CallTryDoc['extract']
  scheduledFor: number | null
  now: number
}

export function firstRow(workspace: WorkspaceDoc, agent: AgentDoc, c: FirstTry): CallTryDoc {
  return {
    id: tryId(c.id, 1),
    callId: c.id,
    attempt: 1,
    workspaceId: workspace.id,
    developerId: developerOf(workspace),
    agentId: agent.id,
    agentName: agent.name,
    direction: 'outbound',
    surface: 'phone',
    listed: c.scheduledFor === null,
    status: c.scheduledFor === null ? 'ringing' : 'scheduled',
    phone: c.phone,
    from: c.from,
    callRef: null,
    reference: c.body.reference ?? null,
    metadata: c.body.metadata ?? null,
    variables: c.variables,
    purpose: c.body.purpose.trim(),
    extract: c.extract,
    voice: c.body.overrides?.voice ?? null,
    conversationId: null,
    scheduledFor: c.scheduledFor === null ? null : iso(c.scheduledFor),
    startedAt: c.scheduledFor === null ? iso(c.now) : null,
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
    createdAt: iso(c.now),
  }
}
