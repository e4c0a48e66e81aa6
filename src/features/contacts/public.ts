/** What other features may use of contacts: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { ContactService } from './service'

export interface ContactsServices {
  contacts: ContactService
}

export const contactsRef = featureRef<ContactsServices>('contacts')

export { normalizePhone, unreadablePhone } from './phone'
export type { ContactService } from './service'
