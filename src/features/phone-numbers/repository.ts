/** Phone numbers rented or brought in the console, each assignable to one agent. */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

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
  /** External agents may reply through the API on this number (docs/spec.md reply endpoint). */
  externalAgents: boolean
  since: string
  createdAt: string
}

export const phoneNumbersSpec: CollectionSpec = {
  name: 'phone_numbers',
  indexes: [
    // A number belongs to one workspace at a time, whoever holds it.
    { name: 'number', fields: [['number', 1]], unique: true },
    {
      name: 'workspace_created',
      fields: [
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    { name: 'agent', fields: [['agentId', 1]] },
  ],
}

export type PhoneNumberRepo = Collection<PhoneNumberDoc>
export const openPhoneNumbers = (store: DocumentStore): Promise<PhoneNumberRepo> => store.collection<PhoneNumberDoc>(phoneNumbersSpec)
