/**
 * The campaign actor kind: machines/campaign.ts bound to its effects, one actor per campaign
 * (`cmp_…`). `sendRecipients` is a callback actor that runs while the campaign is `sending`: it
 * starts the feature's sender and hands back its stop function, so leaving `sending` (pause, cancel,
 * failure) stops it before the next recipient; its progress and a campaign-wide failure come back as
 * chart events. A crash while sending leaves a running child in the stored snapshot, so the runtime
 * resumes the actor at boot and the sender carries on from the recipients' own rows. A scheduled
 * draft's start is a durable timer (campaignDeadlines), so it survives restarts and passivation.
 */
import { type EventObject, fromCallback } from 'xstate'
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import type { OutboxEntry, StoredVersion } from '../../../actors/types'
import { type CampaignEffectInput, type CampaignEvent, type CampaignFailureInput, type CampaignSnapshot, campaignDeadlines, campaignMachine, MACHINE_VERSION } from '../../../machines/campaign'

/** What the sender tells the chart while it runs. */
export interface CampaignReport {
  /** How many recipients are handled so far (absolute; a repeat is harmless). */
  progress(handled: number): void
  /** A failure that stops the whole campaign, in words for `lastError`. */
  failed(error: string): void
}

export interface CampaignEffectPort {
  /** Starts sending to every recipient not yet reached; returns the function that stops it. */
  send(id: string, report: CampaignReport): () => void
  notifyFailure(id: string, lastError: string | null): Promise<void>
  project(id: string, snapshot: CampaignSnapshot): Promise<void>
  publish(id: string, event: OutboxEntry['event'], eventId: string): Promise<void>
}

/** Version 3 had no schedule: its campaigns start by hand only. Older versions are refused. */
export function migrateCampaign(stored: StoredVersion): unknown | null {
  if (stored.version !== 3) return null
  const s = stored.snapshot as { context: Record<string, unknown> }
  return { ...s, context: { ...s.context, scheduledAt: null } }
}

export const campaignKind = defineActorKind({
  kind: 'campaign',
  machine: campaignMachine,
  version: MACHINE_VERSION,
  deadlines: campaignDeadlines,
  migrate: migrateCampaign,
  subject: (input: { id: string }) => input.id,
  provide: (port: CampaignEffectPort, { effect, clock }) => ({
    actors: {
      sendRecipients: fromCallback<EventObject, CampaignEffectInput>(({ input, sendBack }) => {
        const back = (event: CampaignEvent) => sendBack(event)
        return port.send(input.id, {
          progress: (handled) => back({ type: 'campaign.progress', at: clock.now(), handled }),
          failed: (error) => back({ type: 'campaign.failed', at: clock.now(), error }),
        })
      }),
      notifyFailure: effect('notifyFailure', (i: CampaignFailureInput) => port.notifyFailure(i.id, i.lastError ?? null)),
    },
  }),
  persisted: (port, id, snapshot) => port.project(id, snapshot),
  emitted: (port, id, event, eventId) => port.publish(id, event, eventId),
})

export type CampaignActors = ActorsOf<typeof campaignKind>
