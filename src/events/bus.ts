/**
 * The event bus: every domain event is recorded once (with an id) and then fanned out.
 * - `local` subscribers run on the instance that published, after the record is stored; this is
 *   where work that must happen once goes (webhook deliveries), because exactly one instance
 *   publishes each event.
 * - `cluster` subscribers run on every instance (through the coordination store's pub/sub: Redis
 *   when REDIS_URL is set), for fan-out that each instance needs (live streams, caches).
 * A subscriber that throws is logged and never stops the others or the publisher.
 */
import { iso, type Clock } from '../clock'
import type { Coordination } from '../coordination/port'
import { newId } from '../ids'
import type { Logger } from '../logger'
import type { Collection, CollectionSpec, DocumentStore } from '../store/port'

export const EVENT_TYPES = [
  'lead.captured',
  'conversation.escalated',
  'conversation.resolved',
  'call.completed',
  'call.analysed',
  'campaign.finished',
  'message.received',
  'chat.message.completed',
  'voice.call.ended',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface DomainEvent {
  type: EventType
  /** The workspace the event happened in (a developer's own or a customer's). */
  workspaceId: string
  agentId: string | null
  data: Record<string, unknown>
}

export interface RecordedEvent extends DomainEvent {
  [field: string]: unknown
  id: string
  createdAt: string
}

export type EventHandler = (event: RecordedEvent) => void | Promise<void>

export const eventsSpec: CollectionSpec = {
  name: 'events',
  indexes: [
    { name: 'workspace_created', fields: [['workspaceId', 1], ['createdAt', -1], ['id', -1]] },
    { name: 'workspace_type_created', fields: [['workspaceId', 1], ['type', 1], ['createdAt', -1]] },
  ],
}

const CHANNEL = 'events'

export class EventBus {
  private readonly local: EventHandler[] = []
  private readonly cluster: EventHandler[] = []
  private unsubscribe: (() => Promise<void>) | null = null

  private constructor(
    readonly events: Collection<RecordedEvent>,
    private readonly coordination: Coordination,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  static async open(store: DocumentStore, coordination: Coordination, clock: Clock, logger: Logger): Promise<EventBus> {
    const bus = new EventBus(await store.collection<RecordedEvent>(eventsSpec), coordination, clock, logger)
    bus.unsubscribe = await coordination.subscribe(CHANNEL, (message) => bus.onClusterMessage(message))
    return bus
  }

  subscribe(handler: EventHandler, scope: 'local' | 'cluster' = 'local'): () => void {
    const list = scope === 'local' ? this.local : this.cluster
    list.push(handler)
    return () => {
      const i = list.indexOf(handler)
      if (i >= 0) list.splice(i, 1)
    }
  }

  /** Records the event, then runs local subscribers (awaited) and tells every instance. */
  async publish(event: DomainEvent): Promise<RecordedEvent> {
    const recorded: RecordedEvent = { ...event, id: newId('evt'), createdAt: iso(this.clock.now()) }
    await this.events.insert(recorded)
    await this.run(this.local, recorded)
    await this.coordination.publish(CHANNEL, JSON.stringify(recorded)).catch((err) => {
      this.logger.warn({ err, eventId: recorded.id }, 'event not fanned out to other instances')
    })
    return recorded
  }

  async close(): Promise<void> {
    await this.unsubscribe?.()
  }

  private async onClusterMessage(message: string): Promise<void> {
    let event: RecordedEvent
    try {
      event = JSON.parse(message)
    } catch {
      return
    }
    await this.run(this.cluster, event)
  }

  private async run(handlers: EventHandler[], event: RecordedEvent): Promise<void> {
    for (const handler of [...handlers]) {
      try {
        await handler(event)
      } catch (err) {
        this.logger.error({ err, eventId: event.id, type: event.type }, 'event subscriber failed')
      }
    }
  }
}
