/**
 * What the inbox shows of a conversation beyond its v1 form:
 * - `who`: the customer in words — the contact's name, phone and email when the number is a
 *   contact's, the address of an email thread, a website visitor's or bot chat's short id;
 * - `lastMessage`: the newest public message, cut to a preview, with its author and time;
 * - `replyWindow` (chat app only): whether the customer's 24-hour window is open, and when it
 *   closes or closed — a teammate's text goes only while it is (messaging/reply.ts).
 * One contacts query and one newest-message read per conversation of the page.
 */
import { type Clock, iso } from '../../clock'
import type { ContactService } from '../contacts/public'
import { type ConversationDoc, type ConversationFeature, type MessageDoc, messageText } from '../conversations/public'
import { WINDOW_MS } from '../messaging/public'

/** A preview is one line of a list row: about two lines of the inbox's column at most. */
const PREVIEW_CHARS = 140

export interface InboxExtra {
  who: { label: string; name: string | null; phone: string | null; email: string | null }
  lastMessage: { author: MessageDoc['author']; text: string; at: string } | null
  replyWindow: { open: boolean; closesAt: string | null } | null
}

/** The part of a messaging thread id after its channel and owner (`web:{agent}:{visitor}` → visitor). */
const threadTail = (c: ConversationDoc): string | null => {
  const thread = typeof c.thread === 'string' ? c.thread : null
  return thread ? thread.split(':').slice(2).join(':') || null : null
}

/** A long generated id shortened to its tail (enough to tell two visitors apart in a list). */
const short = (id: string) => (id.length > 12 ? `…${id.slice(-6)}` : id)

export class InboxRows {
  constructor(
    private readonly d: {
      contacts: Pick<ContactService, 'findByPhones'>
      conversations: Pick<ConversationFeature['conversations'], 'listMessages'>
      clock: Clock
    },
  ) {}

  async extras(workspaceId: string, items: ConversationDoc[]): Promise<InboxExtra[]> {
    const phones = [...new Set(items.map((c) => c.customer.phone).filter((p): p is string => !!p))]
    const contacts = new Map((await this.d.contacts.findByPhones(workspaceId, phones)).map((k) => [k.phone, k]))
    const newest = await Promise.all(items.map((c) => this.d.conversations.listMessages(c.id, {}, 1, null)))
    const now = this.d.clock.now()
    return items.map((c, i) => {
      const contact = c.customer.phone ? (contacts.get(c.customer.phone) ?? null) : null
      const tail = threadTail(c)
      const email = contact?.email ?? (c.channel === 'email' ? tail : null)
      const phone = c.customer.phone
      const fallback = c.channel === 'web' ? `Website visitor${tail ? ` ${short(tail)}` : ''}` : c.channel === 'botapp' ? `Bot chat${tail ? ` ${short(tail)}` : ''}` : 'Unknown caller'
      const last = newest[i]![0]
      const text = last ? messageText(last).replace(/\s+/g, ' ') : ''
      const closes = c.lastInboundAt ? Date.parse(c.lastInboundAt) + WINDOW_MS : null
      return {
        who: { label: contact?.name ?? phone ?? email ?? fallback, name: contact?.name ?? null, phone, email },
        lastMessage: last ? { author: last.author, text: text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text, at: last.createdAt } : null,
        replyWindow: c.channel === 'chatapp' ? { open: closes !== null && now <= closes, closesAt: closes === null ? null : iso(closes) } : null,
      }
    })
  }
}
