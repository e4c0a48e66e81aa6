/** Contacts: the people an agent talks to, imported in the console with their consent. */
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { contactsConsole } from './console'
import { contactsRef } from './public'
import { contactsSpec, openContacts } from './repository'
import { ContactService } from './service'

export const contactsFeature = defineFeature(contactsRef, {
  async build(kernel) {
    const contacts = new ContactService(await openContacts(kernel.store), kernel.clock)
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [contactsSpec]), 'contacts erased')
    return { services: { contacts }, console: [contactsConsole({ auth: kernel.http.console, contacts })] }
  },
})
