/** Sequences and their enrolments as stored (docs/spec.md Sequence; enrolments are ours). */
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export interface SequenceStep {
  /** A template name (sent any time) or text (only while the customer's window is open). */
  template: string | null
  text: string | null
  delayMinutes: number
}

export interface SequenceDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  name: string
  agentId: string
  exitOnReply: boolean
  status: 'active' | 'archived'
  steps: SequenceStep[]
  createdAt: string
}

export interface EnrolmentDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  sequenceId: string
  contactId: string
  phone: string
  variables: Record<string, string>
  status: 'active' | 'finished' | 'stopped'
  /** The next step to send (0-based). */
  step: number
  nextAt: string | null
  stopReason: string | null
  /** Per step: `sending` (marked before the send), `sent`, or `skipped: <reason>`. */
  steps: Record<string, string>
  createdAt: string
}

export const sequencesSpec: CollectionSpec = workspaceSpec('sequences')
export const enrolmentsSpec: CollectionSpec = {
  name: 'enrolments',
  indexes: [
    // Already enrolled? Stop on reply / opt-out (by the person's phone), on deletion (by workspace).
    {
      name: 'sequence_phone',
      fields: [
        ['sequenceId', 1],
        ['phone', 1],
      ],
    },
    {
      name: 'workspace_phone',
      fields: [
        ['workspaceId', 1],
        ['phone', 1],
      ],
    },
  ],
}

export const openSequences = async (store: DocumentStore): Promise<WorkspaceCollection<SequenceDoc>> => new WorkspaceCollection(await store.collection<SequenceDoc>(sequencesSpec))
export const openEnrolments = async (store: DocumentStore): Promise<WorkspaceCollection<EnrolmentDoc>> => new WorkspaceCollection(await store.collection<EnrolmentDoc>(enrolmentsSpec))
