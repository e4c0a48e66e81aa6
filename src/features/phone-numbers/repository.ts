/** Phone numbers rented or brought in the console, each assignable to one agent. */
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export interface PhoneNumberDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  number: string
  label: string | null
  source: 'rented' | 'brought'
  channel: 'voice' | 'chatapp'
  agentId: string | null
  /** A brought number without carrier credentials cannot place or end calls (docs/spec.md Calls). */
  carrierCredentials: boolean
  /** The number's own carrier account, sealed (carrier-accounts.ts); absent: the instance's carrier account. */
  carrierAccount?: string | null
  /** External agents may reply through the API on this number (docs/spec.md reply endpoint). */
  externalAgents: boolean
  since: string
  createdAt: string
}

export const phoneNumbersSpec: CollectionSpec = workspaceSpec('phone_numbers', [
  // A number belongs to one workspace at a time, whoever holds it.
  { name: 'number', fields: [['number', 1]], unique: true },
  { name: 'agent', fields: [['agentId', 1]] },
])

export type PhoneNumberRepo = WorkspaceCollection<PhoneNumberDoc>
export const openPhoneNumbers = async (store: DocumentStore): Promise<PhoneNumberRepo> => new WorkspaceCollection(await store.collection<PhoneNumberDoc>(phoneNumbersSpec))
