/**
 * Replies an earlier version of the service left with `delivery: null` when it was killed while
 * sending them (before answers were owed in the store, answers.ts): nobody can tell any more whether
 * the customer got them, so at the first start of this version each becomes `unknown`
 * (`error.code: interrupted`, docs/api/messaging.md), once, before this instance resumes any
 * answer. Messages an answer still owes (its reply stored and not yet handed over) are left to it.
 */
import { type Clock, iso } from '../../clock'
import type { OwedWork } from '../../events/owed-work'
import type { Logger } from '../../logger'
import type { Collection, Doc } from '../../store/port'
import type { ConversationFeature } from '../conversations/public'
import { INTERRUPTED, type OwedAnswer } from './answers'

/** The marker in `settings` that says the pass ran (kept; its presence is the whole record). */
const MARKER = 'messaging:lost-deliveries-resolved'

export async function resolveLostDeliveries(d: {
  settings: Collection<Doc>
  conversations: ConversationFeature['conversations']
  owed: OwedWork<OwedAnswer>
  clock: Clock
  logger: Logger
}): Promise<number> {
  if (await d.settings.get(MARKER)) return 0
  const now = iso(d.clock.now())
  const undelivered = await d.conversations.undelivered(['chatapp', 'botapp', 'email'], now)
  // Read after the messages: a reply an answer still owes was committed with its owed record.
  const owedReplies = new Set((await d.owed.items.find({})).map((item) => item.replyId))
  let resolved = 0
  for (const message of undelivered) {
    if (owedReplies.has(message.id)) continue
    // Read again: a receipt or a live answer may have written it since the list was read.
    const current = await d.conversations.message(message.id)
    if (!current || current.delivery) continue
    await d.conversations.setDelivery(message.id, { status: 'unknown', at: now, error: INTERRUPTED })
    resolved++
  }
  await d.settings.upsert({ id: MARKER, at: now, resolved })
  if (resolved) d.logger.warn({ resolved }, 'replies an earlier crash left without a delivery are marked unknown')
  return resolved
}
