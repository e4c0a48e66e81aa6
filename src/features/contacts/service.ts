/** Contacts created in the console (import) with consent flags. */
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { clashes, invalid, notThere } from '../../refusals'
import { DuplicateKeyError } from '../../store/port'
import { normalizePhone, unreadablePhone } from './phone'
import type { ContactDoc, ContactRepo } from './repository'

export const presentContact = (c: ContactDoc) => ({
  id: c.id,
  phone: c.phone,
  name: c.name,
  email: c.email,
  optedOut: c.optedOut,
  doNotCall: c.doNotCall,
})

/** Told when a contact withdraws consent (opted out, or put on the do-not-call list). */
export type ConsentWithdrawn = (contact: ContactDoc, reason: 'opted_out' | 'do_not_call') => Promise<void>

export class ContactService {
  private readonly withdrawn: ConsentWithdrawn[] = []

  constructor(
    private readonly contacts: ContactRepo,
    private readonly clock: Clock,
  ) {}

  /** Features that wait to reach a person (scheduled calls) stop when the person says no. */
  onConsentWithdrawn(listener: ConsentWithdrawn): void {
    this.withdrawn.push(listener)
  }

  async create(workspaceId: string, input: { phone: string; name?: string | null; email?: string | null; optedOut?: boolean }): Promise<ContactDoc> {
    const phone = normalizePhone(input.phone)
    if (!phone) throw invalid('phone', unreadablePhone(input.phone))
    const now = iso(this.clock.now())
    const doc: ContactDoc = {
      id: newId('ct'),
      workspaceId,
      phone,
      name: input.name ?? null,
      email: input.email ?? null,
      optedOut: input.optedOut ?? false,
      doNotCall: false,
      createdAt: now,
      updatedAt: now,
    }
    try {
      await this.contacts.in(workspaceId).insert(doc)
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw clashes(`a contact with phone ${phone} already exists`)
      throw error
    }
    return doc
  }

  async patch(workspaceId: string, id: string, input: { optedOut?: boolean; doNotCall?: boolean }): Promise<ContactDoc> {
    const contacts = this.contacts.in(workspaceId)
    const doc = await contacts.get(id)
    if (!doc) throw notThere(`no contact ${id} in this workspace`)
    const set: Record<string, unknown> = { updatedAt: iso(this.clock.now()) }
    if (input.optedOut !== undefined) set.optedOut = input.optedOut
    if (input.doNotCall !== undefined) set.doNotCall = input.doNotCall
    const updated = (await contacts.update(id, set))!
    const reason = input.optedOut && !doc.optedOut ? 'opted_out' : input.doNotCall && !doc.doNotCall ? 'do_not_call' : null
    if (reason) for (const listener of this.withdrawn) await listener(updated, reason)
    return updated
  }

  /** Contacts in a workspace (a customer's counts). */
  countIn(workspaceId: string): Promise<number> {
    return this.contacts.in(workspaceId).count()
  }

  /** The contacts of a workspace behind these E.164 numbers (those that are contacts), in one query. */
  findByPhones(workspaceId: string, phones: string[]): Promise<ContactDoc[]> {
    return phones.length ? this.contacts.in(workspaceId).find({ phone: { $in: phones } }) : Promise.resolve([])
  }

  /** The contact behind any spelling of a number, or null. */
  findByPhone(workspaceId: string, phone: string): Promise<ContactDoc | null> {
    const normal = normalizePhone(phone)
    return normal ? this.contacts.in(workspaceId).findOne({ phone: normal }) : Promise.resolve(null)
  }
}
