/**
 * Keeps every instance's in-memory search indexes (service.ts IndexCache) in step with the store.
 * An instance updates its own cached index when it adds or removes passages, but another
 * instance's cache cannot see that write: it would keep answering from the old passages (missing
 * a new document, citing a deleted one) until evicted. So every change is broadcast as
 * "knowledge changed (workspaceId, agentId)" on the coordination store's pub/sub (Redis with
 * REDIS_URL), and each other instance drops that agent's index; its next search rebuilds it from
 * the store, which already has the change (the broadcast goes out after the write).
 *
 * The sender skips its own echo: its index is already right. A broadcast that fails (Redis
 * down) is logged and does not fail the request, whose write is done: answering an error would
 * invite a retry that adds the document twice.
 */
import type { Coordination } from '../../coordination/port'
import { randomId } from '../../ids'
import type { Logger } from '../../logger'
import type { KnowledgeService } from './service'

export const KNOWLEDGE_CHANNEL = 'knowledge-changed'

interface ChangeMessage {
  from: string
  workspaceId: string
  agentId: string
}

/** Wires `knowledge` to the other instances; returns the unsubscribe to call at shutdown. */
export async function syncKnowledgeAcrossInstances(knowledge: KnowledgeService, coordination: Coordination, logger: Logger, instanceId = `kn_${randomId(10)}`): Promise<() => Promise<void>> {
  const unsubscribe = await coordination.subscribe(KNOWLEDGE_CHANNEL, (raw) => {
    const message = parse(raw)
    if (message && message.from !== instanceId) knowledge.invalidate(message.workspaceId, message.agentId)
  })
  knowledge.onChange(async ({ workspaceId, agentId }) => {
    const message: ChangeMessage = { from: instanceId, workspaceId, agentId }
    await coordination.publish(KNOWLEDGE_CHANNEL, JSON.stringify(message)).catch((err) => {
      logger.warn({ err, workspaceId, agentId }, 'knowledge change not broadcast; other instances may search stale passages until their index is evicted')
    })
  })
  return unsubscribe
}

function parse(raw: string): ChangeMessage | null {
  try {
    const m = JSON.parse(raw) as Partial<ChangeMessage>
    return typeof m.from === 'string' && typeof m.workspaceId === 'string' && typeof m.agentId === 'string' ? (m as ChangeMessage) : null
  } catch {
    return null
  }
}
