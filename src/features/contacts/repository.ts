/** Contacts: the people an agent talks to, one per phone number per workspace. */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export interface ContactDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  phone: string
  name: string | null
  email: string | null
  /** Withdrew consent on some channel: nothing may be sent or placed to them. */
  optedOut: boolean
  doNotCall: boolean
  createdAt: string
  updatedAt: string
}

export const contactsSpec: CollectionSpec = {
  name: 'contacts',
  indexes: [
    {
      name: 'workspace_phone',
      fields: [
        ['workspaceId', 1],
        ['phone', 1],
      ],
      unique: true,
    },
    {
      name: 'workspace_created',
      fields: [
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
  ],
}

export type ContactRepo = Collection<ContactDoc>
export const openContacts = (store: DocumentStore): Promise<ContactRepo> => store.collection<ContactDoc>(contactsSpec)
