/** Contacts: the people an agent talks to, one per phone number per workspace. */
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

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

export const contactsSpec: CollectionSpec = workspaceSpec('contacts', [
  {
    name: 'workspace_phone',
    fields: [
      ['workspaceId', 1],
      ['phone', 1],
    ],
    unique: true,
  },
])

export type ContactRepo = WorkspaceCollection<ContactDoc>
export const openContacts = async (store: DocumentStore): Promise<ContactRepo> => new WorkspaceCollection(await store.collection<ContactDoc>(contactsSpec))
