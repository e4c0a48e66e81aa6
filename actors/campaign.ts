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
import { type CampaignEffectInput, type CampaignEvent, type CampaignFailureInput, type CampaignSnapshot, campaignDeadlines, campaignMachine, MACHINE_VERSION } from '../machines/campaign'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind, OutboxEntry, StoredVersion } from './types'

export const CAMPAIGN_KIND = 'campaign'

export type CampaignActors = ActorKind<typeof campaignMachine>

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

export function registerCampaign(runtime: ActorRuntime, deps: { effects: CampaignEffectPort; clock: Clock; logger: Logger }): CampaignActors {
  const machine = campaignMachine.provide({
    actors: {
      sendRecipients: fromCallback<EventObject, CampaignEffectInput>(({ input, sendBack }) => {
        const back = (event: CampaignEvent) => sendBack(event)
        return deps.effects.send(input.id, {
          progress: (handled) => back({ type: 'campaign.progress', at: deps.clock.now(), handled }),
          failed: (error) => back({ type: 'campaign.failed', at: deps.clock.now(), error }),
        })
      }),
      notifyFailure: bindEffect(
        { kind: CAMPAIGN_KIND, clock: deps.clock, logger: deps.logger },
        'notifyFailure',
        (i: CampaignFailureInput) => deps.effects.notifyFailure(i.id, i.lastError ?? null),
        (i) => i.id,
      ),
    },
  })
  return runtime.register(CAMPAIGN_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: campaignDeadlines,
    migrate: migrateCampaign,
    persisted: (id, snapshot) => deps.effects.project(id, snapshot as CampaignSnapshot),
    emitted: (id, event, eventId) => deps.effects.publish(id, event, eventId),
  })
}

/** Version 3 had no schedule: its campaigns start by hand only. Older versions are refused. */
export function migrateCampaign(stored: StoredVersion): unknown | null {
  if (stored.version !== 3) return null
  const s = stored.snapshot as { context: Record<string, unknown> }
  return { ...s, context: { ...s.context, scheduledAt: null } }
}
